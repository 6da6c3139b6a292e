// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening_gate: the gate and all-or-nothing hooks.
 *
 * How this program works (see kfdsync_hardening.h): reloaded with
 * assume_unverified=Y (attach nothing even though amdgpu passes the gate)
 * or fail_hook=cpu_set, kfdsync attaches nothing and says why (INFO,
 * STATUS, the kernel log), and a relayed signal counts once; then it is
 * reloaded as it was, hooks attached. The gate itself is
 * tests/guest/gate's. Tests register themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include "sim_test.h"
#include "kfdsync_hardening.h"

/* ---- the gate and all-or-nothing hooks (reload kfdsync) ---- */

static char saved_params[256];

/* Reload kfdsync with @params (plus the saved ones). */
static void reload(const char *params)
{
	char all[512];
	int ret;

	if (kfdsync >= 0)
		close(kfdsync);
	kfdsync = -1;
	ret = kmod_unload("kfdsync", 50);
	if (ret)
		tap_bail("rmmod kfdsync: %s", strerror(-ret));
	snprintf(all, sizeof(all), "%s %s", saved_params, params);
	ret = kmod_load_project("kmod/kfdsync.ko", all);
	if (ret)
		tap_bail("insmod kfdsync %s: %s", all, strerror(-ret));
	kfdsync = raw_open(RAW_KFDSYNC_DEV);
	if (kfdsync < 0)
		tap_bail("open %s: %s", RAW_KFDSYNC_DEV, strerror(-kfdsync));
}

/* The kernel log has a line containing @needle (root reads /dev/kmsg). */
static bool kmsg_has(const char *needle)
{
	char buf[2048];
	bool found = false;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		buf[n] = '\0';
		found |= strstr(buf, needle) != NULL;
	}
	close(fd);
	return found;
}

TEST(unverified_release_relay_mode)
{
	struct kfdsync_event_query q;
	struct kfdsync_status st;
	struct kfdsync_info info;
	HsaEvent *ev;

	if (!getenv("KFDSYNC_KMOD_DIR"))
		tap_bail("needs the guest");
	reload("assume_unverified=1");
	raw_info(kfdsync, &info);
	raw_status(kfdsync, &st);
	tap_ok(!info.hooks &&
	       (info.info_flags & KFDSYNC_INFO_AMDKFD_UNVERIFIED),
	       "unverified_info_no_hooks (hooks %#x, flags %#x)", info.hooks,
	       info.info_flags);
	tap_ok(st.source == KFDSYNC_SOURCE_RELAY &&
	       st.relay_reason == KFDSYNC_RELAY_UNVERIFIED &&
	       strstr(st.detail, "assume_unverified=Y"),
	       "unverified_status_says_why (%u, \"%s\", ABIs \"%s\")",
	       st.relay_reason, st.detail, st.verified);
	tap_ok(kmsg_has("assume_unverified=Y: no hooks, relay mode"), "unverified_kernel_log");
	ev = registered_event();
	tap_ok(!raw_query(kfdsync, ev->EventId, &q) && q.source == KFDSYNC_SOURCE_RELAY,
	       "unverified_event_relayed");
	hsaKmtSetEvent(ev);
	usleep(100000);
	tap_ok(raw_age(kfdsync, ev->EventId) == 0 && !raw_relay(kfdsync, ev->EventId) &&
	       raw_age(kfdsync, ev->EventId) == 1, "unverified_only_relay_counts");
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
}

/*
 * One hook fails to attach (fail_hook=cpu_set): none is attached, and a
 * GPU signal relayed by userspace counts once (with the GPU hook attached
 * alone it used to count twice).
 */
TEST(one_hook_missing_attaches_none)
{
	struct kfdsync_status st;
	struct kfdsync_info info;
	HsaEvent *ev;
	uint64_t age;

	reload("fail_hook=cpu_set");
	raw_info(kfdsync, &info);
	raw_status(kfdsync, &st);
	tap_ok(!info.hooks, "partial_hooks_none_attached (%#x)", info.hooks);
	tap_ok(st.relay_reason == KFDSYNC_RELAY_MISSING &&
	       strstr(st.detail, "cpu_set"), "partial_hooks_status_says_why (\"%s\")",
	       st.detail);
	ev = registered_event();
	age = raw_age(kfdsync, ev->EventId);
	queue_done(queue, gpu_write(queue, ev, ev->EventId));
	if (hsaKmtWaitOnEvent(ev, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
		tap_bail("event not signalled");
	/* The relay reports the one signal amdkfd delivered. */
	raw_relay(kfdsync, ev->EventId);
	age = raw_age(kfdsync, ev->EventId) - age;
	tap_ok(age == 1, "partial_hooks_signal_counted_once (+%" PRIu64 ")", age);
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
	reload("");
	raw_info(kfdsync, &info);
	tap_ok(info.hooks && info.hooks == info.hooks_supported,
	       "hooks_back_after_reload (%#x)", info.hooks);
}

static void setup(void)
{
	static const char *const params[] = {
		"watchdog_ms", "watchdog_max_ms", "max_fences", "max_events",
	};
	unsigned int i;
	size_t len = 0;
	char buf[32];

	hardening_setup();
	hardening_sim();
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		if (!kfdsync_param_read(params[i], buf, sizeof(buf)))
			len += snprintf(saved_params + len, sizeof(saved_params) - len,
					"%s%s=%s", len ? " " : "", params[i], buf);
}

int main(int argc, char **argv)
{
	harness_require = hardening_require;
	harness_setup = setup;
	return harness_main(argc, argv);
}
