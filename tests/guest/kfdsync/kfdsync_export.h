/* SPDX-License-Identifier: MIT */
/*
 * The set-up of the kfdsync_export_* programs: KFD signal events exported
 * as sync_files and eventfds.
 *
 * Each program opens /dev/kfd (libhsakmt), the GPU simulator (/dev/kfdsim)
 * and /dev/kfdsync, and registers a signal event of its own (ev1) with
 * kfdsync (export_setup()); the tests export "the next signal after age A"
 * as sync_files and eventfds. Signals come from simulated RELEASE_MEM
 * packets, which go through amdkfd's real interrupt path, and from
 * hsaKmtSetEvent(). Each check that a fence signalled "after the packet
 * ran" reads the simulator's completion record after the wake-up: the
 * simulator records a RELEASE_MEM complete before it raises the interrupt,
 * so a wake-up before the packet ran would show an incomplete record.
 *
 * In relay mode (kfdsync loaded with hooks=0: each program has a
 * <program>_relay launcher that runs it under relay-mode), every process
 * runs a relay thread per event that waits with
 * hsaKmtWaitOnMultipleEvents() and reports signals with
 * KFDSYNC_IOCTL_RELAY_SIGNAL, as libkfdsync would. The relay never waits
 * with a timeout: on 6.1, amdkfd loses an auto-reset signal that lands as a
 * timed wait expires (set_event() sees the waiter, so it does not latch the
 * signal, but the wait already chose TIMEOUT and free_waiters() restores it
 * only for -ERESTARTSYS). It waits forever on the event and a private stop
 * event instead.
 *
 * Include after sim_test.h. Naming as in the house style: __x() returns
 * -errno, x() bails out.
 */
#ifndef KFDSYNC_TESTS_KFDSYNC_EXPORT_H
#define KFDSYNC_TESTS_KFDSYNC_EXPORT_H

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <linux/kfdsync.h>
#include <linux/sync_file.h>

#include "child.h"
#include "harness.h"
#include "kfdsync_test.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

static int kfdsync = -1;
static int sim = -1;
static uint32_t queue;
static bool relay_mode;

/* ---- small helpers ---- */

/* As raw_slot() (kfdsync_raw.h): 0 in the "_noslot" runs. */
static inline int __ev_register(int fd, uint32_t id, uint64_t slot, uint64_t *age)
{
	struct kfdsync_event_register a = { .event_id = id,
		.slot_addr = getenv("KFDSYNC_TEST_NO_SLOT") ? 0 : slot };

	if (ioctl(fd, KFDSYNC_IOCTL_EVENT_REGISTER, &a))
		return -errno;
	if (age)
		*age = a.age;
	return 0;
}

static inline int __ev_query(int fd, uint32_t id, struct kfdsync_event_query *q)
{
	memset(q, 0, sizeof(*q));
	q->event_id = id;
	return ioctl(fd, KFDSYNC_IOCTL_EVENT_QUERY, q) ? -errno : 0;
}

static inline uint64_t ev_age(int fd, uint32_t id)
{
	struct kfdsync_event_query q;
	int ret = __ev_query(fd, id, &q);

	if (ret)
		tap_bail("EVENT_QUERY %u: %s", id, strerror(-ret));
	return q.age;
}

/* A sync_file fd, or -errno. */
static inline int __export(int fd, uint32_t id, uint64_t age, uint64_t deadline_ns)
{
	struct kfdsync_export a = { .event_id = id, .age = age, .deadline_ns = deadline_ns };

	if (ioctl(fd, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, &a))
		return -errno;
	return a.fd;
}

static inline int export(int fd, uint32_t id, uint64_t age)
{
	int ret = __export(fd, id, age, 0);

	if (ret < 0)
		tap_bail("EXPORT_SYNC_FILE %u@%" PRIu64 ": %s", id, age, strerror(-ret));
	return ret;
}

static inline int __export_eventfd(int fd, uint32_t id, uint64_t age, int efd)
{
	struct kfdsync_export a = { .event_id = id, .age = age, .fd = efd };

	return ioctl(fd, KFDSYNC_IOCTL_EXPORT_EVENTFD, &a) ? -errno : 0;
}

/* 1 if @fd is readable within @timeout_ms, else 0. */
static inline int readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ret;

	do
		ret = poll(&p, 1, timeout_ms);
	while (ret < 0 && errno == EINTR);
	return ret == 1 && (p.revents & POLLIN);
}

/* SYNC_IOC_FILE_INFO of a single-fence sync_file: its status, names. */
static inline int fence_info(int fd, struct sync_fence_info *fi)
{
	struct sync_file_info info = { .num_fences = 1 };

	memset(fi, 0, sizeof(*fi));
	info.sync_fence_info = (uintptr_t)fi;
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	return fi->status;
}

static inline int fence_status(int fd)
{
	struct sync_fence_info fi;

	return fence_info(fd, &fi);
}

/* Wait until the event's age reaches @age; false after WAIT_MS. */
static inline bool wait_age(int fd, uint32_t id, uint64_t age)
{
	int64_t end = kfdsim_now_ns() + (int64_t)WAIT_MS * 1000000;

	while (ev_age(fd, id) < age) {
		if (kfdsim_now_ns() > end)
			return false;
		usleep(1000);
	}
	return true;
}

/* Wait returned and the queue's record covers @end (one more interrupt). */
static inline bool completed_before_wake(uint32_t q, uint64_t end, uint64_t irqs_before)
{
	struct kfdsim_queue_status st = queue_status(sim, q);
	bool ok = st.completed >= end && st.interrupts >= irqs_before + 1 &&
		  st.last_irq_pos >= end;

	if (!ok)
		diag_status("queue", &st);
	return ok;
}

/* Some work, then RELEASE_MEM on @ev; returns the end position. */
static inline uint64_t submit_signal(uint32_t q, HsaEvent *ev, uint32_t delay_us)
{
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	if (delay_us)
		pm4_sim_delay(&b, delay_us);
	pm4_release_mem_event(&b, slot_addr(ev), ev->EventId);
	return submit(sim, q, &b);
}

/* ---- relay threads (relay mode only) ---- */

struct relay {
	int fd;
	HsaEvent *ev;
	HsaEvent *stop_ev;	/* set only to end the thread */
	pthread_t thread;
	volatile bool stop;
	bool running;
};

static inline void *relay_main(void *arg)
{
	struct relay *r = arg;

	HsaEvent *evs[2] = { r->ev, r->stop_ev };

	for (;;) {
		struct kfdsync_relay_signal a = { .event_id = r->ev->EventId };

		bool woke = hsaKmtWaitOnMultipleEvents(evs, 2, false, HSA_EVENTTIMEOUT_INFINITE) ==
			    HSAKMT_STATUS_SUCCESS;

		if (r->stop)
			break;
		if (!woke)
			continue;
		if (ioctl(r->fd, KFDSYNC_IOCTL_RELAY_SIGNAL, &a))
			tap_diag("RELAY_SIGNAL %u: %s", a.event_id, strerror(errno));
	}
	return NULL;
}

static inline void relay_start(struct relay *r, int fd, HsaEvent *ev)
{
	memset(r, 0, sizeof(*r));
	if (!relay_mode)
		return;
	r->fd = fd;
	r->ev = ev;
	r->stop_ev = new_event();
	if (pthread_create(&r->thread, NULL, relay_main, r))
		tap_bail("pthread_create failed");
	r->running = true;
}

static inline void relay_stop(struct relay *r)
{
	if (!r->running)
		return;
	r->stop = true;
	hsaKmtSetEvent(r->stop_ev);
	pthread_join(r->thread, NULL);
	hsaKmtDestroyEvent(r->stop_ev);
	r->running = false;
}

/* ---- the program's own event, set up and torn down ---- */

static HsaEvent *ev1;
static struct relay relay1;
static bool kfd_open;

/* Events area of the caller's amdkfd process: KFD_SIGNAL_EVENT_LIMIT slots. */
static inline void unmap_events_area(const HsaEvent *ev)
{
	munmap((void *)(uintptr_t)(slot_addr(ev) - (uint64_t)ev->EventId * 8), 4096 * 8);
}

/*
 * For harness_setup: /dev/kfd, a simulated queue, a context, and ev1
 * registered (with its relay thread in relay mode).
 */
static inline void export_setup(void)
{
	int ret;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD failed");
	kfd_open = true;
	sim = kfdsim_open();
	if (sim < 0)
		tap_bail("kfdsim_open: %s", strerror(-sim));
	queue = queue_create(sim);
	kfdsync = open_kfdsync_mode(&relay_mode);

	ev1 = new_event();
	ret = __ev_register(kfdsync, ev1->EventId, slot_addr(ev1), NULL);
	if (ret)
		tap_bail("cannot register event %u: %s", ev1->EventId, strerror(-ret));
	relay_start(&relay1, kfdsync, ev1);
}

/*
 * For harness_teardown, and before amdgpu unloads: everything of ours off
 * kfdsync and /dev/kfd. Closing the context cancels its pending fences.
 */
static inline void export_teardown(void)
{
	relay_stop(&relay1);
	if (kfdsync >= 0)
		close(kfdsync);
	kfdsync = -1;
	if (ev1) {
		unmap_events_area(ev1);
		hsaKmtDestroyEvent(ev1);
		ev1 = NULL;
	}
	if (sim >= 0) {
		kfdsim_queue_destroy(sim, queue);
		close(sim);
	}
	sim = -1;
	if (kfd_open)
		hsaKmtCloseKFD();
	kfd_open = false;
}

/* ---- other processes (this program again, tests/common/child.h) ---- */

/* struct msg's commands between the programs and their children. */
enum { MSG_READY = 1, MSG_CHECK, MSG_SET, MSG_RESULT, MSG_EXIT, MSG_FDS, MSG_DONE };

/*
 * In a child's main(): the mode kfdsync is in (false if INFO fails, with
 * *@ok false: exit 9).
 */
static inline bool child_relay_mode(bool *ok)
{
	struct kfdsync_info info = { 0 };
	int fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);

	*ok = fd >= 0 && !ioctl(fd, KFDSYNC_IOCTL_INFO, &info);
	if (fd >= 0)
		close(fd);
	return info.info_flags & KFDSYNC_INFO_RELAY_FORCED;
}

/* In a child: /dev/kfd and a context of its own (exit 10, 11 if not). */
static inline void child_setup(void)
{
	scrub_hsa_env();
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		exit(10);
	kfdsync = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	if (kfdsync < 0)
		exit(11);
}

/*
 * In a child, after child_setup(): a new event of its own registered, and
 * a sync_file pending on its next signal in *@fence. 0, or the child's exit
 * code: 13 no event or registration, 14 no fence.
 */
static inline int child_pending_fence(HsaEvent **ev, int *fence)
{
	*ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!*ev || __ev_register(kfdsync, (*ev)->EventId, slot_addr(*ev), NULL))
		return 13;
	*fence = __export(kfdsync, (*ev)->EventId, 0, 0);
	return *fence < 0 ? 14 : 0;
}

/* A role a child of spawn_child() plays: its exit status is the result. */
struct export_child {
	const char *role;
	int (*run)(int sock);
};

/*
 * The main() of every export program: a child of spawn_child() plays its
 * role from @children (NULL-terminated, or NULL); otherwise the tests run,
 * set up by @setup (export_setup() if NULL) and export_teardown().
 */
static inline int export_main(int argc, char **argv, void (*setup)(void),
			      const struct export_child *children)
{
	const char *role;
	bool ok;
	int sock;

	if (child_args(argc, argv, &role, &sock)) {
		relay_mode = child_relay_mode(&ok);
		if (!ok)
			return 9;
		for (; children && children->role; children++)
			if (!strcmp(role, children->role))
				return children->run(sock);
		return 8;
	}
	harness_require = require_kfdsync_guest;
	harness_setup = setup ? setup : export_setup;
	harness_teardown = export_teardown;
	return harness_main(argc, argv);
}

#endif /* KFDSYNC_TESTS_KFDSYNC_EXPORT_H */
