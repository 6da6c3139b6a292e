// SPDX-License-Identifier: MIT
/*
 * bridge_export - libkfdsync's event API end to end: a libhsakmt event,
 * registered with kfdsync, exported as a sync_file and as an eventfd, and
 * signalled by the GPU simulator's RELEASE_MEM (amdkfd's real interrupt
 * path) or by hsaKmtSetEvent. Checks the fence never signals before the
 * simulator recorded the packet as complete.
 *
 * bridge_export_relay runs this program with kfdsync loaded in forced relay
 * mode (hooks=0, see tests/guest/kfdsync/relay-mode): the same assertions
 * then hold through libkfdsync's relay threads, which this program counts
 * in /proc/self/task (without event ages one per relayed event, joined on
 * unregister; with them one per context; all joined on kfdsync_ctx_free(),
 * none with the relay turned off or in hooks mode).
 *
 * It also checks /proc/PID/fdinfo of contexts and timelines (the module's
 * "kfdsync-" keys, read by 'kfdsync list'): event ages after signals, reads
 * racing registration and close from another process, procfs permissions
 * for another user, names with spaces and a newline.
 */
#include <fcntl.h>
#include <grp.h>
#include <hsakmt.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kfdsync_timeline.h>

#include "kfd_raw.h"
#include "kfdsim.h"
#include "kfdsync.h"
#include "pm4.h"
#include "proc_threads.h"
#include "tap.h"

#define MS 1000000LL

static HsaEvent *new_event(void)
{
	HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };
	HsaEvent *ev = NULL;

	return hsaKmtCreateEvent(&desc, false, false, &ev) == HSAKMT_STATUS_SUCCESS ? ev : NULL;
}

static int32_t status_of(int fd, char *timeline, size_t size)
{
	struct kfdsync_fence_status f = { .status = 99 };
	struct kfdsync_sync_file_status st = { .status = 99 };

	if (kfdsync_sync_file_get_status(fd, &st, &f, 1) != 1)
		return 99;
	if (timeline)
		snprintf(timeline, size, "%s %s", f.driver, f.timeline);
	return st.status;
}

static char build_root[512];
static bool relay_mode;

/* Every thread of this process, once there are @want (proc_threads.h). */
static int threads_settled(int want)
{
	return proc_threads_settled("", want);
}

/* /proc/@pid/fdinfo/@fd into @buf; the length, or -errno. */
static int fdinfo_of(pid_t pid, int fd, char *buf, size_t size)
{
	char path[64];
	size_t len = 0;
	ssize_t r;
	int f, err;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	while (len + 1 < size && (r = read(f, buf + len, size - len - 1)) > 0)
		len += (size_t)r;
	err = r < 0 ? -errno : 0;
	close(f);
	buf[len] = '\0';
	return err ? err : (int)len;
}

/* The kfdsync-event-@id line's value in @text, or "" (static buffer). */
static const char *event_line(const char *text, uint32_t id)
{
	static char line[256];
	char key[48];
	const char *p;

	snprintf(key, sizeof(key), "\nkfdsync-event-%u:\t", id);
	line[0] = '\0';
	p = strstr(text, key);
	if (p)
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p + strlen(key), "\n"),
			 p + strlen(key));
	return line;
}

/* The context's event @id in fdinfo: "source=S age=A" and pending=P. */
static void fdinfo_event_is(struct kfdsync_ctx *ctx, uint32_t id, uint64_t age,
			    uint32_t pending, const char *last, const char *name)
{
	char text[8192], want[96], want_p[32], want_l[32], key[64];
	const char *line;
	int n = fdinfo_of(getpid(), kfdsync_ctx_fd(ctx), text, sizeof(text));

	snprintf(want, sizeof(want), "source=%s age=%llu ", relay_mode ? "relay" : "hooks",
		 (unsigned long long)age);
	snprintf(want_p, sizeof(want_p), " pending=%u ", pending);
	snprintf(want_l, sizeof(want_l), " last=%s", last);
	snprintf(key, sizeof(key), "\nkfdsync-tgid:\t%d\n", getpid());
	line = n > 0 ? event_line(text, id) : "";
	tap_ok(n > 0 && strstr(text, key) && strstr(text, "\nkfdsync-context:\t") &&
	       strstr(text, "\nkfdsync-watchdog-max-ms:\t") &&
	       !strncmp(line, want, strlen(want)) && strstr(line, want_p) &&
	       strstr(line, want_l), "%s (%s)", name, n > 0 ? line : strerror(-n));
}

/*
 * fdinfo read while the context is used and closed: a child process reads
 * every fd's fdinfo of this one in a loop (so the last reference to a
 * context may be the child's, and the release runs there) while this
 * process creates contexts, registers and unregisters an event, exports,
 * and closes them. Passes when nothing but a vanished fd (ENOENT) failed
 * and every kfdsync fdinfo read was complete; the runner's log scan
 * catches a splat. The child says when it first saw a context (@seenfd):
 * if the 100 rounds went by before it did (a fast machine, a slow /proc
 * walk), one more context stays open until it has.
 */
static void fdinfo_race(HsaEvent *ev)
{
	int pipefd[2], seenfd[2], status = -1, rounds = 0, i;
	struct kfdsync_ctx *last = NULL;
	char byte;

	/* The child's exit status: 0 passed, 2 a read failed, 3 none seen. */
	pid_t parent = getpid(), pid;

	if (pipe2(pipefd, O_CLOEXEC) || pipe2(seenfd, O_CLOEXEC | O_NONBLOCK)) {
		tap_ok(false, "fdinfo_read_races_register_and_close (pipe: %s)", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		static char text[65536];
		unsigned int seen = 0, bad = 0;
		struct pollfd p = { .fd = pipefd[0], .events = POLLIN };

		close(pipefd[1]);
		close(seenfd[0]);
		while (poll(&p, 1, 0) == 0) {
			for (int fd = 0; fd < 64; fd++) {
				int n = fdinfo_of(parent, fd, text, sizeof(text));

				if (n < 0 && n != -ENOENT)
					bad++;
				if (n > 0 && strstr(text, "kfdsync-context:")) {
					if (!seen++ && write(seenfd[1], "s", 1) != 1)
						bad++;
					if (!strstr(text, "kfdsync-watchdog-max-ms:"))
						bad++;
				}
			}
		}
		_exit(bad ? 2 : seen ? 0 : 3);
	}
	close(pipefd[0]);
	for (i = 0; pid > 0 && i < 100; i++) {
		struct kfdsync_ctx *c;
		int fd;

		if (kfdsync_ctx_new(&c))
			break;
		kfdsync_ctx_set_relay(c, false);
		if (kfdsync_event_add_hsa(c, ev, NULL) == 0) {
			fd = kfdsync_event_export_sync_file(c, ev->EventId, 0, 0);
			if (i & 1)
				kfdsync_event_remove(c, ev->EventId);
			if (fd >= 0)
				close(fd);
		}
		kfdsync_ctx_free(c);
		rounds++;
	}
	close(seenfd[1]);
	/* Not seen yet: one context stays until the child saw it (10 s at most). */
	if (pid > 0 && read(seenfd[0], &byte, 1) != 1 && !kfdsync_ctx_new(&last)) {
		struct pollfd p = { .fd = seenfd[0], .events = POLLIN };

		poll(&p, 1, 10000);
	}
	close(seenfd[0]);
	close(pipefd[1]);
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		status = -1;
	kfdsync_ctx_free(last);
	tap_ok(rounds == 100 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "fdinfo_read_races_register_and_close (%d rounds, status %#x)", rounds, status);
}

/* Run 'kfdsync list' with @args; its stdout into @out. 0 on exit status 0. */
static int run_list(const char *args, char *out, size_t size)
{
	char cmd[700];
	size_t len = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/bridge/kfdsync list %s", build_root, args);
	out[0] = '\0';
	p = popen(cmd, "r");
	if (!p)
		return -1;
	len = fread(out, 1, size - 1, p);
	out[len] = '\0';
	return pclose(p) == 0 ? 0 : -1;
}

/*
 * Another user: a child that opened a context and a timeline as root, then
 * became uid/gid 65534 (dumpable again, so that its own /proc is its). It
 * cannot read this process's fdinfo (procfs: EACCES), and 'kfdsync list'
 * run as that user lists its context and timeline, not this process's, and
 * says that some processes were not readable.
 */
static void fdinfo_other_user(struct kfdsync_ctx *ctx)
{
	int ctx_fd = kfdsync_ctx_fd(ctx), status = -1;
	pid_t parent = getpid(), pid;

	pid = fork();
	if (pid == 0) {
		static char out[65536];
		char text[256], want[128], theirs[64];
		int c, t, bits = 0, n;

		c = open("/dev/kfdsync", O_RDWR | O_CLOEXEC);
		t = open("/dev/kfdsync_timeline", O_RDWR | O_CLOEXEC);
		prctl(PR_SET_NAME, "nobody 9");
		if (c < 0 || t < 0 || setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(0x80);
		prctl(PR_SET_DUMPABLE, 1);
		n = fdinfo_of(parent, ctx_fd, text, sizeof(text));
		if (n == -EACCES)
			bits |= 1;
		if (run_list("--json 2>/dev/null", out, sizeof(out)) == 0) {
			snprintf(want, sizeof(want), "\"tgid\": %d, \"comm\": \"nobody 9\", ",
				 getpid());
			snprintf(theirs, sizeof(theirs), "\"tgid\": %d,", parent);
			if (strstr(out, "\"contexts\": [{") && strstr(out, want))
				bits |= 2;
			if (!strstr(out, theirs))
				bits |= 4;
			if (strstr(out, "\"timelines\": [{") &&
			    strstr(strstr(out, "\"timelines\""), want))
				bits |= 8;
		}
		if (run_list("2>&1 >/dev/null", out, sizeof(out)) == 0 &&
		    strstr(out, "processes not readable"))
			bits |= 16;
		_exit(bits ^ 31);
	}
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		status = -1;
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "fdinfo_other_user_eacces_and_list_own_only (missing bits %#x)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : status);
}

/* The line of debugfs table @table that contains @what; false without debugfs. */
static bool debugfs_has(const char *table, const char *what, bool *readable)
{
	char path[128], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kfdsync/%s", table);
	f = fopen(path, "re");
	*readable = f != NULL;
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * A timeline opened under a name with a newline and a space: its fdinfo
 * (value, pending, the name escaped), 'kfdsync list --json' (the name and
 * comm whole), and debugfs rows that keep their columns (escaped).
 */
static void fdinfo_timeline(void)
{
	struct kfdsync_tl_create_fence cf = { .value = 5, .name = "t", .fence = -1 };
	char text[1024], want[160], want2[160];
	static char out[65536];
	bool ok, readable;
	__u32 step = 2;
	int tl, n;

	prctl(PR_SET_NAME, "br\nx 2");
	tl = open("/dev/kfdsync_timeline", O_RDWR | O_CLOEXEC);
	ok = tl >= 0 && ioctl(tl, KFDSYNC_TL_IOC_CREATE_FENCE, &cf) == 0 &&
	     ioctl(tl, KFDSYNC_TL_IOC_INC, &step) == 0;
	n = ok ? fdinfo_of(getpid(), tl, text, sizeof(text)) : -1;
	snprintf(want, sizeof(want), "\nkfdsync-name:\tkfdsync-timeline:%d:br\\012x\\0402\n",
		 getpid());
	tap_ok(n > 0 && strstr(text, "\nkfdsync-timeline:\t") &&
	       strstr(text, "\nkfdsync-fence-context:\t") &&
	       strstr(text, "\nkfdsync-value:\t2\n") && strstr(text, "\nkfdsync-pending:\t1\n") &&
	       strstr(text, "\nkfdsync-max-fences:\t") && strstr(text, want),
	       "fdinfo_timeline_value_pending_escaped_name");
	if (n <= 0 || !strstr(text, want))
		tap_diag("%s", n > 0 ? text : "no fdinfo");

	snprintf(want, sizeof(want), "\"tgid\": %d, \"comm\": \"br\\u000ax 2\", ", getpid());
	snprintf(want2, sizeof(want2), "\"name\": \"kfdsync-timeline:%d:br\\u000ax 2\"", getpid());
	ok = run_list("--json", out, sizeof(out)) == 0 && strstr(out, "\"timelines\": [{");
	tap_ok(ok && strstr(strstr(out, "\"timelines\""), want) && strstr(out, want2),
	       "cli_list_json_timeline_comm_with_newline");
	if (!ok || !strstr(out, want2))
		tap_diag("%s", out);

	snprintf(want, sizeof(want), " br\\012x\\0402 ");
	snprintf(want2, sizeof(want2), " kfdsync-timeline:%d:br\\012x\\0402\n", getpid());
	ok = debugfs_has("timelines", want, &readable) &&
	     debugfs_has("timelines", want2, &readable);
	if (readable)
		tap_ok(ok, "debugfs_timelines_names_escaped");
	else
		tap_skip("no debugfs", "debugfs_timelines_names_escaped");
	ok = debugfs_has("contexts", " br\\040export\\0401 ", &readable);
	if (readable)
		tap_ok(ok, "debugfs_contexts_comm_escaped");
	else
		tap_skip("no debugfs", "debugfs_contexts_comm_escaped");
	if (cf.fence >= 0)
		close(cf.fence);
	if (tl >= 0)
		close(tl);
	prctl(PR_SET_NAME, "br export 1");
}

/* 'kfdsync list --json' shows this context (comm intact) and its event. */
static void list_shows(struct kfdsync_ctx *ctx, uint32_t id)
{
	char cmd[600], out[8192] = "", want_ctx[128], want_ev[128];
	size_t len = 0;
	FILE *p;

	(void)ctx;
	snprintf(cmd, sizeof(cmd), "%s/bridge/kfdsync list --json", build_root);
	p = popen(cmd, "r");
	if (p) {
		len = fread(out, 1, sizeof(out) - 1, p);
		out[len] = '\0';
	}
	const char *src = relay_mode ? "relay" : "hooks";

	/* Numbers as JSON numbers, words as strings. */
	snprintf(want_ctx, sizeof(want_ctx), "\"tgid\": %d, \"comm\": \"br export 1\", "
		 "\"source\": \"%s\", \"events\": 1, \"pending\": 1", getpid(), src);
	snprintf(want_ev, sizeof(want_ev), "\"tgid\": %d, \"source\": \"%s\", "
		 "\"id\": %u, \"age\": 0", getpid(), src, id);
	tap_ok(p && pclose(p) == 0 && strstr(out, want_ctx), "cli_list_json_context");
	tap_ok(strstr(out, want_ev) != NULL, "cli_list_json_event");
	if (!strstr(out, want_ev))
		tap_diag("%s", out);
}

int main(void)
{
	uint32_t dw[64], queue, pasid;
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct kfdsync_event_state es;
	struct kfdsync_module_info mi;
	struct kfdsync_ctx *ctx2;
	struct kfdsim_queue_status qs;
	struct kfdsync_ctx *ctx;
	char name[80], want[80];
	HsaEvent *ev, *ev2, *ev3;
	uint64_t age = 99, end;
	int sim, fd, efd, ret, base, kfd, ages;

	tap_skip_program_if("KFDSYNC_KFD_UNUSABLE");
	tap_plan(39);
	/* 6.16+: a process without a GPU has no pasid for the simulator. */
	tap_skip_rest_if("KFDSYNC_SIM_UNUSABLE");
	/* libhsakmt reads HSA_* variables: start from none (after noting ours). */
	snprintf(build_root, sizeof(build_root), "%s", getenv("KFDSYNC_BUILD_ROOT") ?: ".");
	clearenv();
	setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD");
	sim = kfdsim_open();
	if (sim < 0 || kfdsim_queue_create(sim, 1024, &queue, &pasid))
		tap_bail("no GPU simulator");
	/* A comm with spaces: 'kfdsync list' must keep it whole. */
	prctl(PR_SET_NAME, "br export 1");
	if (kfdsync_ctx_new(&ctx))
		tap_bail("no kfdsync context");
	ev = new_event();
	ev2 = new_event();
	if (!ev || !ev2)
		tap_bail("hsaKmtCreateEvent");
	if (kfdsync_ctx_get_module_info(ctx, &mi))
		tap_bail("kfdsync_ctx_get_module_info");
	relay_mode = mi.flags & KFDSYNC_INFO_RELAY_FORCED;
	tap_diag("kfdsync in %s mode", relay_mode ? "relay" : "hooks");
	/*
	 * With amdkfd's event ages the relay serves a context's events with
	 * one thread (up to 1024 events); without them each event has a
	 * thread of its own. A thread is joined when its last event is
	 * removed (kfdsync_event(3), "The relay").
	 */
	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	ages = relay_mode && kfd >= 0 && kfd_raw_has_event_age(kfd);
	if (kfd >= 0)
		close(kfd);

	/*
	 * A signal left pending from before the registration is not counted
	 * (event_age_1 below): the relay discards it, the hooks never saw it.
	 */
	hsaKmtSetEvent(ev);
	base = proc_threads("", NULL, 0);
	ret = kfdsync_event_add_hsa(ctx, ev, &age);
	tap_ok(ret == 0 && age == 0, "event_register_hsa_age_0 (%d)", ret);
	ret = threads_settled(base + (relay_mode ? 1 : 0)) - base;
	tap_ok(ret == (relay_mode ? 1 : 0), "relay_threads_after_register (+%d)", ret);
	{
		/* A child of fork() has no relay threads: freeing its copy must not wait. */
		int status = -1;
		pid_t pid = fork();

		if (pid == 0) {
			kfdsync_ctx_free(ctx);
			_exit(0);
		}
		tap_ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		       WEXITSTATUS(status) == 0 && threads_settled(base + ret) == base + ret,
		       "ctx_free_in_forked_child_returns");
	}
	tap_ok(kfdsync_event_add_hsa(ctx, ev, NULL) == -EEXIST, "event_register_twice_eexist");
	/* Another event's slot address: ev2 is still found by its id (issue 32). */
	ret = kfdsync_event_add(ctx, ev2->EventId, ev->EventData.HWData2, NULL);
	tap_ok(ret == 0 && kfdsync_event_get_state(ctx, ev2->EventId, &es) == 0 &&
	       es.source == (relay_mode ? KFDSYNC_SOURCE_RELAY : KFDSYNC_SOURCE_HOOKS),
	       "event_register_any_slot_address_by_id (%d)", ret);
	kfdsync_event_remove(ctx, ev2->EventId);
	ret = kfdsync_event_get_state(ctx, ev->EventId, &es);
	tap_ok(ret == 0 && es.age == 0 && es.pending == 0 && es.error == 0 &&
	       es.source == (relay_mode ? KFDSYNC_SOURCE_RELAY : KFDSYNC_SOURCE_HOOKS),
	       "event_query_fresh (source %u)", es.source);

	/*
	 * Export at the current age, then let the simulated GPU signal. The
	 * fence must stay pending across a CLI run ('kfdsync list'), which
	 * takes over 10 s (the default watchdog) on the debug kernel: 60 s.
	 */
	fd = kfdsync_event_export_sync_file(ctx, ev->EventId, 0, 60000 * MS);
	snprintf(want, sizeof(want), "kfdsync kfdsync:%d:ev%u", getpid(), ev->EventId);
	name[0] = '\0';
	ret = fd >= 0 ? status_of(fd, name, sizeof(name)) : fd;
	tap_ok(ret == 0 && !strcmp(name, want), "export_sync_file_pending_named (%s)", name);
	tap_ok(kfdsync_event_get_state(ctx, ev->EventId, &es) == 0 && es.pending == 1,
	       "event_query_counts_pending");
	list_shows(ctx, ev->EventId);
	fdinfo_event_is(ctx, ev->EventId, 0, 1, "0", "fdinfo_event_age_0_pending_1");
	pm4_sim_delay(&b, 20000);
	pm4_release_mem_event(&b, ev->EventData.HWData2, ev->EventId);
	ret = kfdsim_submit_buf(sim, queue, &b, &end);
	tap_ok(ret == 0 && kfdsync_sync_file_wait(fd, 10000 * MS) == 0, "release_mem_signals_fence");
	tap_ok(kfdsim_queue_status(sim, queue, &qs) == 0 && qs.completed >= end,
	       "fence_signalled_after_packet_completed");
	tap_ok(status_of(fd, NULL, 0) == 1, "fence_status_signalled");
	ret = kfdsync_event_get_state(ctx, ev->EventId, &es);
	tap_ok(ret == 0 && es.age == 1 && es.pending == 0, "event_age_1 (%llu)",
	       (unsigned long long)es.age);
	fdinfo_event_is(ctx, ev->EventId, 1, 0, "1", "fdinfo_event_age_1_after_signal");
	close(fd);

	/* An export for an age already passed is born signalled. */
	fd = kfdsync_event_export_sync_file(ctx, ev->EventId, 0, 0);
	tap_ok(fd >= 0 && status_of(fd, NULL, 0) == 1, "export_past_age_born_signalled");
	close(fd);
	tap_ok(kfdsync_event_export_sync_file(ctx, ev->EventId, 5, 0) == -EINVAL,
	       "export_future_age_einval");

	/* eventfd: a CPU set from libhsakmt wakes it. */
	efd = eventfd(0, EFD_CLOEXEC);
	tap_ok(kfdsync_event_export_eventfd(ctx, ev->EventId, 1, 0, efd) == 0,
	       "export_eventfd");
	{
		struct pollfd p = { .fd = efd, .events = POLLIN };
		bool early = poll(&p, 1, 0) != 0;
		uint64_t v = 0;

		hsaKmtSetEvent(ev);
		tap_ok(!early && poll(&p, 1, 10000) == 1 && read(efd, &v, 8) == 8 && v == 1,
		       "eventfd_woken_by_cpu_set");
		tap_ok(!kfdsync_event_get_state(ctx, ev->EventId, &es) && es.last_status == 1,
		       "event_state_last_status_signalled (%d)", es.last_status);
		/* An eventfd woken by the watchdog: the state says why. */
		tap_ok(kfdsync_event_export_eventfd(ctx, ev->EventId, 2, 100 * MS, efd) == 0 &&
		       poll(&p, 1, 10000) == 1 && read(efd, &v, 8) == 8 &&
		       !kfdsync_event_get_state(ctx, ev->EventId, &es) &&
		       es.last_status == -ETIMEDOUT,
		       "eventfd_watchdog_last_status_etimedout (%d)", es.last_status);
	}
	close(efd);

	/* The watchdog ends a fence that never signals. */
	fd = kfdsync_event_export_sync_file(ctx, ev->EventId, 2, 100 * MS);
	tap_ok(fd >= 0 && kfdsync_sync_file_wait(fd, 10000 * MS) == 0 &&
	       status_of(fd, NULL, 0) == -ETIMEDOUT, "watchdog_ends_fence_etimedout");
	close(fd);

	/*
	 * Unregistering cancels what is pending. A fence at or below the seqno
	 * the watchdog ended would be born with -ETIMEDOUT (fences of an event
	 * end in order): move past it first.
	 */
	hsaKmtSetEvent(ev);
	for (ret = 0; ret < 10000 && (kfdsync_event_get_state(ctx, ev->EventId, &es) ||
				      es.age < 3); ret++)
		usleep(1000);
	fdinfo_event_is(ctx, ev->EventId, 3, 0, "-110", "fdinfo_event_age_3_last_etimedout");
	fd = kfdsync_event_export_sync_file(ctx, ev->EventId, 3, 0);
	tap_ok(kfdsync_event_remove(ctx, ev->EventId) == 0 && fd >= 0 &&
	       status_of(fd, NULL, 0) == -ECANCELED, "unregister_cancels_pending");
	close(fd);
	tap_ok(threads_settled(base) == base, "relay_thread_joined_on_unregister");
	tap_ok(kfdsync_event_remove(ctx, ev->EventId) == -ENOENT, "unregister_unknown_enoent");
	tap_ok(kfdsync_event_get_state(ctx, ev->EventId, &es) == -ENOENT, "query_unknown_enoent");

	/*
	 * With the relay off, nothing reports ev2's signals in relay mode: its
	 * fence ends by the watchdog. The hooks see the CPU set either way.
	 */
	kfdsync_ctx_set_relay(ctx, false);
	ret = kfdsync_event_add_hsa(ctx, ev2, NULL);
	tap_ok(ret == 0 && threads_settled(base) == base, "relay_off_no_thread");
	fd = kfdsync_event_export_sync_file(ctx, ev2->EventId, 0, 100 * MS);
	hsaKmtSetEvent(ev2);
	ret = fd >= 0 && kfdsync_sync_file_wait(fd, 10000 * MS) == 0 ? status_of(fd, NULL, 0) : fd;
	tap_ok(ret == (relay_mode ? -ETIMEDOUT : 1), "relay_off_%s (status %d)",
	       relay_mode ? "signal_not_seen" : "hooks_unaffected", ret);
	close(fd);
	kfdsync_event_remove(ctx, ev2->EventId);
	kfdsync_ctx_set_relay(ctx, true);

	/*
	 * Two events relayed at once: a signal of one ends only its fences
	 * (one relay thread for both with event ages, one each without).
	 * Freeing the context joins its relays and cancels the other event's
	 * fence. In relay mode this context's relay starts after the first
	 * context's thread stopped, and ev3 takes the id of that thread's
	 * destroyed wake-up event. The fences are exported after the thread
	 * count settled: a count that never settles must not outlast their
	 * 10 s watchdog and pass for a missed signal.
	 */
	ev3 = new_event();
	ret = kfdsync_ctx_new(&ctx2);
	if (ret == 0 && ev3 && kfdsync_event_add_hsa(ctx2, ev2, NULL) == 0 &&
	    kfdsync_event_add_hsa(ctx2, ev3, NULL) == 0) {
		int want = relay_mode ? (ages ? 1 : 2) : 0;
		int f2, f3;
		int32_t s2, s3;

		ret = threads_settled(base + want) - base;
		tap_ok(ret == want, "relay_threads_two_events (+%d, expected +%d)", ret, want);
		f2 = kfdsync_event_export_sync_file(ctx2, ev2->EventId, 0, 0);
		f3 = kfdsync_event_export_sync_file(ctx2, ev3->EventId, 0, 0);
		hsaKmtSetEvent(ev3);
		s3 = kfdsync_sync_file_wait(f3, 10000 * MS) == 0 ? status_of(f3, NULL, 0) : 98;
		s2 = status_of(f2, NULL, 0);
		tap_ok(s3 == 1 && s2 == 0, "relay_per_event_signals_only_its_fences (%d %d)", s3,
		       s2);
		kfdsync_ctx_free(ctx2);
		s2 = status_of(f2, NULL, 0);
		tap_ok(threads_settled(base) == base && s2 == -ECANCELED,
		       "ctx_free_joins_relays (%d)", s2);
		close(f2);
		close(f3);
	} else {
		tap_ok(false, "relay_threads_two_events (%d)", ret);
		tap_ok(false, "relay_per_event_signals_only_its_fences (%d)", ret);
		tap_ok(false, "ctx_free_joins_relays (%d)", ret);
		kfdsync_ctx_free(ret == 0 ? ctx2 : NULL);
	}
	if (ev3)
		hsaKmtDestroyEvent(ev3);

	fdinfo_race(ev2);
	fdinfo_other_user(ctx);
	fdinfo_timeline();

	kfdsync_ctx_free(ctx);
	kfdsim_queue_destroy(sim, queue);
	close(sim);
	hsaKmtDestroyEvent(ev);
	hsaKmtDestroyEvent(ev2);
	hsaKmtCloseKFD();
	return tap_exit();
}
