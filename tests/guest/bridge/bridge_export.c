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
 * in /proc/self/task (one per relayed event, joined on unregister and on
 * kfdsync_ctx_free(), none with the relay turned off or in hooks mode).
 */
#include <dirent.h>
#include <hsakmt.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfdsim.h"
#include "kfdsync.h"
#include "pm4.h"
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

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n - 2;	/* . and .. */
}

/*
 * threads(), once it is @want: pthread_join() returns when the thread has
 * released its stack, a moment before the kernel drops it from
 * /proc/self/task. Gives up after about 10 s and returns the count then.
 */
static int threads_settled(int want)
{
	int n = threads();

	for (int i = 0; n != want && i < 10000; i++) {
		usleep(1000);
		n = threads();
	}
	return n;
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

	snprintf(want_ctx, sizeof(want_ctx), "\"tgid\": \"%d\", \"comm\": \"br export 1\", "
		 "\"source\": \"%s\", \"events\": \"1\", \"pending\": \"1\"", getpid(), src);
	snprintf(want_ev, sizeof(want_ev), "\"tgid\": \"%d\", \"source\": \"%s\", "
		 "\"id\": \"%u\", \"age\": \"0\"", getpid(), src, id);
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
	int sim, fd, efd, ret, base;

	tap_skip_program_if("KFDSYNC_KFD_UNUSABLE");
	tap_plan(29);
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
	 * A signal left pending from before the registration is not counted
	 * (event_age_1 below): the relay discards it, the hooks never saw it.
	 */
	hsaKmtSetEvent(ev);
	base = threads();
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
	tap_ok(kfdsync_event_add(ctx, ev2->EventId, ev->EventData.HWData2, NULL) == -EINVAL,
	       "event_register_wrong_slot_einval");
	ret = kfdsync_event_get_state(ctx, ev->EventId, &es);
	tap_ok(ret == 0 && es.age == 0 && es.pending == 0 && es.error == 0 &&
	       es.source == (relay_mode ? KFDSYNC_SOURCE_RELAY : KFDSYNC_SOURCE_HOOKS),
	       "event_query_fresh (source %u)", es.source);

	/* Export at the current age, then let the simulated GPU signal. */
	fd = kfdsync_event_export_sync_file(ctx, ev->EventId, 0, 0);
	snprintf(want, sizeof(want), "kfdsync kfdsync:%d:ev%u", getpid(), ev->EventId);
	name[0] = '\0';
	ret = fd >= 0 ? status_of(fd, name, sizeof(name)) : fd;
	tap_ok(ret == 0 && !strcmp(name, want), "export_sync_file_pending_named (%s)", name);
	tap_ok(kfdsync_event_get_state(ctx, ev->EventId, &es) == 0 && es.pending == 1,
	       "event_query_counts_pending");
	list_shows(ctx, ev->EventId);
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
	 * (one relay thread per event). Freeing the context joins both
	 * relays and cancels the other event's fence.
	 */
	ev3 = new_event();
	ret = kfdsync_ctx_new(&ctx2);
	if (ret == 0 && ev3 && kfdsync_event_add_hsa(ctx2, ev2, NULL) == 0 &&
	    kfdsync_event_add_hsa(ctx2, ev3, NULL) == 0) {
		int f2 = kfdsync_event_export_sync_file(ctx2, ev2->EventId, 0, 0);
		int f3 = kfdsync_event_export_sync_file(ctx2, ev3->EventId, 0, 0);
		int32_t s2, s3;

		ret = threads_settled(base + (relay_mode ? 2 : 0)) - base;
		hsaKmtSetEvent(ev3);
		s3 = kfdsync_sync_file_wait(f3, 10000 * MS) == 0 ? status_of(f3, NULL, 0) : 98;
		s2 = status_of(f2, NULL, 0);
		tap_ok(ret == (relay_mode ? 2 : 0) && s3 == 1 && s2 == 0,
		       "relay_per_event_signals_only_its_fences (+%d threads, %d %d)", ret, s3, s2);
		kfdsync_ctx_free(ctx2);
		s2 = status_of(f2, NULL, 0);
		tap_ok(threads_settled(base) == base && s2 == -ECANCELED,
		       "ctx_free_joins_relays (%d)", s2);
		close(f2);
		close(f3);
	} else {
		tap_ok(false, "relay_per_event_signals_only_its_fences (%d)", ret);
		tap_ok(false, "ctx_free_joins_relays (%d)", ret);
		kfdsync_ctx_free(ret == 0 ? ctx2 : NULL);
	}
	if (ev3)
		hsaKmtDestroyEvent(ev3);

	kfdsync_ctx_free(ctx);
	kfdsim_queue_destroy(sim, queue);
	close(sim);
	hsaKmtDestroyEvent(ev);
	hsaKmtDestroyEvent(ev2);
	hsaKmtCloseKFD();
	return tap_exit();
}
