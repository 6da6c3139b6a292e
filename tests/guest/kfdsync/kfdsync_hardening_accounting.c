// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening_accounting: who is charged, and for how much (issue 25).
 *
 * How this program works (see kfdsync_hardening.h): KFDSYNC_IOCTL_STATUS
 * reports the usage of the caller's user, whoever opened the context it is
 * called on (an unprivileged child asks through root's inherited context);
 * the CAP_IPC_LOCK check of every pin is made without an audit record (a
 * kprobe event on security_capable() records the options of each check);
 * and a pin is charged to RLIMIT_MEMLOCK for the whole folio it holds in
 * memory: a word in a transparent huge page or a hugetlb page costs 2 MiB,
 * once per user however many of its words are pinned. Tests register
 * themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "hugepage.h"
#include "sim_test.h"
#include "kfdsync_hardening.h"
#include "kfdsync_kprobe.h"

#define CHILD_SKIP		77

/* ---- STATUS: the caller's usage ---- */

/* As nobody, through root's inherited context: nobody's counts, not root's. */
static int status_child(void *arg)
{
	int ctx = *(int *)arg, tl;
	struct kfdsync_status st;

	if (raw_status(ctx, &st))
		return 2;
	if (st.user_contexts || st.user_timelines)
		return 10;
	tl = raw_open(KFDSYNC_TL_DEVICE);
	if (tl < 0)
		return 3;
	if (raw_status(ctx, &st) || st.user_timelines != 1 || st.user_contexts)
		return 20;
	close(tl);
	return 0;
}

TEST(status_reports_callers_usage)
{
	struct kfdsync_status st = { 0 };

	nodes_for_everyone();
	tap_ret(raw_status(kfdsync, &st), 0, "status_as_opener");
	tap_ok(st.user_contexts >= 1, "status_counts_openers_own_context (%u)",
	       st.user_contexts);
	tap_ret(as_user(NOBODY, status_child, &kfdsync), 0,
		"status_reports_the_callers_user_not_the_openers");
}

/* ---- CAP_IPC_LOCK: checked on every pin, never audited ---- */

/*
 * security_capable(cred, ns, cap, opts) checks of CAP_IPC_LOCK (14) made by
 * this process while @fn runs: how many, and how many with CAP_OPT_NOAUDIT
 * (bit 1). -1 if kprobe events cannot be used.
 */
static int capable_checks(void (*fn)(void), int *noaudit)
{
	const char *t = tracing_dir();
	static char buf[1 << 16];
	char filter[64], *line;
	int n = 0, fd;
	ssize_t len;

	*noaudit = 0;
	if (!t)
		return -1;
	trace_write(t, "kprobe_events", "-:kfdsync_cap/capable\n", O_APPEND);
	if (trace_write(t, "kprobe_events",
			"p:kfdsync_cap/capable security_capable cap=%dx:s32 opts=%cx:x32\n",
			O_APPEND))
		return -1;
	snprintf(filter, sizeof(filter), "cap == 14 && common_pid == %d\n", getpid());
	trace_write(t, "events/kfdsync_cap/capable/filter", filter, O_TRUNC);
	trace_write(t, "trace", "", O_TRUNC);
	trace_write(t, "events/kfdsync_cap/capable/enable", "1\n", O_TRUNC);
	fn();
	trace_write(t, "events/kfdsync_cap/capable/enable", "0\n", O_TRUNC);

	snprintf(buf, sizeof(buf), "%s/trace", t);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[len > 0 ? len : 0] = '\0';
	if (fd >= 0)
		close(fd);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		const char *opts = strstr(line, "opts=0x");

		if (line[0] == '#' || !strstr(line, "cap=14") || !opts)
			continue;
		n++;
		*noaudit += !!(strtoul(opts + 5, NULL, 16) & 2);
	}
	trace_write(t, "kprobe_events", "-:kfdsync_cap/capable\n", O_APPEND);
	return n;
}

static int pin_ret = 1;

/* An import to memory and a condition fence as root: two pins. */
static void pin_twice(void)
{
	static int64_t words[2];
	HsaEvent *ev = registered_event();
	int tl = raw_open(KFDSYNC_TL_DEVICE), fence = raw_tl_fence(tl, 1), cond;

	pin_ret = raw_import_memory(kfdsync, fence, &words[0], 1, 2);
	cond = raw_condition(kfdsync, ev->EventId, &words[1], KFDSYNC_CONDITION_EQ, 1, 0);
	if (!pin_ret && cond < 0)
		pin_ret = cond;
	raw_tl_inc(tl, 1);
	if (cond >= 0)
		close(cond);
	close(fence);
	close(tl);
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
}

TEST(cap_ipc_lock_checked_without_audit)
{
	int noaudit, n = capable_checks(pin_twice, &noaudit);

	if (n < 0) {
		tap_skip("no kprobe events in tracefs", "cap_ipc_lock_checked_without_audit");
		return;
	}
	tap_ret(pin_ret, 0, "pins_as_root");
	tap_ok(n >= 2 && noaudit == n,
	       "cap_ipc_lock_checked_without_audit (%d checks, %d with CAP_OPT_NOAUDIT)", n,
	       noaudit);
}

/* ---- pins are charged for the folio they hold ---- */

/* Import @value into @addr once it fits: ENOMEM while the last pins go. */
static int import_when_released(int ctx, int fence, void *addr)
{
	int ret, i;

	for (i = 0; i < 200; i++) {
		ret = raw_import_memory(ctx, fence, addr, 2, 3);
		if (ret != -ENOMEM)
			break;
		usleep(10000);
	}
	return ret;
}

/*
 * As nobody with RLIMIT_MEMLOCK of two huge pages: a word in each of two
 * huge pages (and a second word of the first) fills it; a third huge page
 * and even a small page are refused until the pins go.
 */
static int thp_child(void *arg)
{
	struct rlimit rl = { 2 * HUGE_SIZE, 2 * HUGE_SIZE };
	static uint64_t small;
	int ctx, tl, fence, i;
	char *p;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 2;
	p = thp_area(3);
	if (!p || anon_huge_kb(p) < 3 * 2048)
		return CHILD_SKIP;
	ctx = raw_open(RAW_KFDSYNC_DEV);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	fence = raw_tl_fence(tl, 1);
	if (ctx < 0 || tl < 0 || fence < 0)
		return 3;
	if (raw_import_memory(ctx, fence, p, 1, 2))
		return 10;
	if (raw_import_memory(ctx, fence, p + 8, 1, 2))
		return 11;
	if (raw_import_memory(ctx, fence, p + HUGE_SIZE, 1, 2))
		return 12;
	if (raw_import_memory(ctx, fence, p + 2 * HUGE_SIZE, 1, 2) != -ENOMEM)
		return 13;
	if (raw_import_memory(ctx, fence, &small, 1, 2) != -ENOMEM)
		return 14;
	/* The imports end: their pins and charges go. */
	raw_tl_inc(tl, 1);
	for (i = 0; i < 1000 && *(volatile uint64_t *)(p + HUGE_SIZE) != 1; i++)
		usleep(1000);
	close(fence);
	fence = raw_tl_fence(tl, 2);
	if (import_when_released(ctx, fence, p + 2 * HUGE_SIZE))
		return 15;
	if (raw_import_memory(ctx, fence, &small, 1, 2))
		return 16;
	raw_tl_inc(tl, 1);
	return 0;
}

TEST(pin_charged_for_whole_huge_page)
{
	int code;

	nodes_for_everyone();
	code = as_user(NOBODY, thp_child, NULL);
	if (code == CHILD_SKIP)
		tap_skip("no transparent huge pages", "thp_pin_charged_for_whole_huge_page");
	else
		tap_ret(code, 0, "thp_pin_charged_for_whole_huge_page");
}

/* As nobody with RLIMIT_MEMLOCK of one huge page: one hugetlb pin fills it. */
static int hugetlb_child(void *arg)
{
	struct rlimit rl = { HUGE_SIZE, HUGE_SIZE };
	static uint64_t small;
	int ctx, tl, fence;
	char *p;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 2;
	p = mmap(NULL, HUGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED)
		return CHILD_SKIP;
	p[0] = 1;
	ctx = raw_open(RAW_KFDSYNC_DEV);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	fence = raw_tl_fence(tl, 1);
	if (ctx < 0 || tl < 0 || fence < 0)
		return 3;
	if (raw_import_memory(ctx, fence, p + 64, 1, 2))
		return 10;
	if (raw_import_memory(ctx, fence, &small, 1, 2) != -ENOMEM)
		return 11;
	raw_tl_inc(tl, 1);
	return 0;
}

TEST(pin_charged_for_whole_hugetlb_page)
{
	char saved[32] = "0", now[32] = "";
	int code;

	read_text("/proc/sys/vm/nr_hugepages", saved, sizeof(saved));
	write_text("/proc/sys/vm/nr_hugepages", "2");
	read_text("/proc/sys/vm/nr_hugepages", now, sizeof(now));
	if (atoi(now) < 1) {
		write_text("/proc/sys/vm/nr_hugepages", saved);
		tap_skip("no hugetlb pages", "hugetlb_pin_charged_for_whole_page");
		return;
	}
	nodes_for_everyone();
	code = as_user(NOBODY, hugetlb_child, NULL);
	write_text("/proc/sys/vm/nr_hugepages", saved);
	if (code == CHILD_SKIP)
		tap_skip("no hugetlb mapping", "hugetlb_pin_charged_for_whole_page");
	else
		tap_ret(code, 0, "hugetlb_pin_charged_for_whole_page");
}

int main(int argc, char **argv)
{
	harness_require = hardening_require;
	harness_setup = hardening_setup;
	return harness_main(argc, argv);
}
