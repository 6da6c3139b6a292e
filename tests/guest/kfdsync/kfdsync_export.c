// SPDX-License-Identifier: MIT
/*
 * kfdsync_export: KFD signal events exported as sync_files and eventfds.
 *
 * How this program works: it opens /dev/kfd (libhsakmt), the GPU simulator
 * (/dev/kfdsim) and /dev/kfdsync, registers its own signal events with
 * kfdsync and exports "the next signal after age A" as sync_files and
 * eventfds. Signals come from simulated RELEASE_MEM packets, which go through
 * amdkfd's real interrupt path, and from hsaKmtSetEvent(). Each check that a
 * fence signalled "after the packet ran" reads the simulator's completion
 * record after the wake-up: the simulator records a RELEASE_MEM complete
 * before it raises the interrupt, so a wake-up before the packet ran would
 * show an incomplete record.
 *
 * Other processes are this program again (re-executed with --child ROLE,
 * talking over a socket pair): a peer with the same event id, an owner that
 * exports 4095 fences to us and is killed, a process that gets a hardware
 * exception.
 *
 * In relay mode (kfdsync loaded with hooks=0, see relay-mode), every process
 * runs a relay thread per event that waits with hsaKmtWaitOnMultipleEvents()
 * and reports signals with KFDSYNC_IOCTL_RELAY_SIGNAL, as libkfdsync would.
 * The relay never waits with a timeout: on 6.1, amdkfd loses an auto-reset
 * signal that lands as a timed wait expires (set_event() sees the waiter,
 * so it does not latch the signal, but the wait already chose TIMEOUT and
 * free_waiters() restores it only for -ERESTARTSYS). It waits forever on the
 * event and a private stop event instead.
 *
 * The last subtests close everything and unload kfdsync while a sync_file
 * is still held, then reload it with the parameters it had; then, with this
 * process off /dev/kfd, unload amdgpu while a context exists and another
 * process's fence is pending, and load it again.
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/kfdsync.h>
#include <linux/sync_file.h>

#include "kmod.h"
#include "sim_test.h"
#include "kfdsync_test.h"

#define OWNER_FENCES		4095
#define BATCH_FDS		200

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

static int kfdsync = -1;
static int sim = -1;
static uint32_t queue;
static bool relay_mode;
static const char *self_exe;

/* ---- small helpers: __x() returns -errno, x() bails out ---- */

static int __ev_register(int fd, uint32_t id, uint64_t slot, uint64_t *age)
{
	struct kfdsync_event_register a = { .event_id = id, .slot_addr = slot };

	if (ioctl(fd, KFDSYNC_IOCTL_EVENT_REGISTER, &a))
		return -errno;
	if (age)
		*age = a.age;
	return 0;
}

static int __ev_query(int fd, uint32_t id, struct kfdsync_event_query *q)
{
	memset(q, 0, sizeof(*q));
	q->event_id = id;
	return ioctl(fd, KFDSYNC_IOCTL_EVENT_QUERY, q) ? -errno : 0;
}

static uint64_t ev_age(int fd, uint32_t id)
{
	struct kfdsync_event_query q;
	int ret = __ev_query(fd, id, &q);

	if (ret)
		tap_bail("EVENT_QUERY %u: %s", id, strerror(-ret));
	return q.age;
}

/* A sync_file fd, or -errno. */
static int __export(int fd, uint32_t id, uint64_t age, uint64_t deadline_ns)
{
	struct kfdsync_export a = { .event_id = id, .age = age, .deadline_ns = deadline_ns };

	if (ioctl(fd, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, &a))
		return -errno;
	return a.fd;
}

static int export(int fd, uint32_t id, uint64_t age)
{
	int ret = __export(fd, id, age, 0);

	if (ret < 0)
		tap_bail("EXPORT_SYNC_FILE %u@%" PRIu64 ": %s", id, age, strerror(-ret));
	return ret;
}

static int __export_eventfd(int fd, uint32_t id, uint64_t age, int efd)
{
	struct kfdsync_export a = { .event_id = id, .age = age, .fd = efd };

	return ioctl(fd, KFDSYNC_IOCTL_EXPORT_EVENTFD, &a) ? -errno : 0;
}

/* 1 if @fd is readable within @timeout_ms, else 0. */
static int readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ret;

	do
		ret = poll(&p, 1, timeout_ms);
	while (ret < 0 && errno == EINTR);
	return ret == 1 && (p.revents & POLLIN);
}

/* SYNC_IOC_FILE_INFO of a single-fence sync_file: its status, names. */
static int fence_info(int fd, struct sync_fence_info *fi)
{
	struct sync_file_info info = { .num_fences = 1 };

	memset(fi, 0, sizeof(*fi));
	info.sync_fence_info = (uintptr_t)fi;
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	return fi->status;
}

static int fence_status(int fd)
{
	struct sync_fence_info fi;

	return fence_info(fd, &fi);
}

/* Wait until the event's age reaches @age; false after WAIT_MS. */
static bool wait_age(int fd, uint32_t id, uint64_t age)
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
static bool completed_before_wake(uint32_t q, uint64_t end, uint64_t irqs_before)
{
	struct kfdsim_queue_status st = queue_status(sim, q);
	bool ok = st.completed >= end && st.interrupts >= irqs_before + 1 &&
		  st.last_irq_pos >= end;

	if (!ok)
		diag_status("queue", &st);
	return ok;
}

/* Some work, then RELEASE_MEM on @ev; returns the end position. */
static uint64_t submit_signal(uint32_t q, HsaEvent *ev, uint32_t delay_us)
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

static void *relay_main(void *arg)
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

static void relay_start(struct relay *r, int fd, HsaEvent *ev)
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

static void relay_stop(struct relay *r)
{
	if (!r->running)
		return;
	r->stop = true;
	hsaKmtSetEvent(r->stop_ev);
	pthread_join(r->thread, NULL);
	hsaKmtDestroyEvent(r->stop_ev);
	r->running = false;
}

/* ---- messages between processes ---- */

struct msg {
	int32_t cmd;
	int32_t val;
	int64_t val64;
};

enum { MSG_READY = 1, MSG_CHECK, MSG_SET, MSG_RESULT, MSG_EXIT, MSG_FDS, MSG_DONE };

static void msg_send(int sock, int32_t cmd, int32_t val, const int *fds, unsigned int n)
{
	struct msg m = { .cmd = cmd, .val = val };
	char control[CMSG_SPACE(sizeof(int) * BATCH_FDS)] = { 0 };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n) {
		struct cmsghdr *c;

		mh.msg_control = control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	if (sendmsg(sock, &mh, 0) != sizeof(m))
		tap_bail("sendmsg: %s", strerror(errno));
}

/* Receive a message; fds (if any) into @fds, their number into *@n. */
static bool msg_recv(int sock, struct msg *m, int *fds, unsigned int *n)
{
	char control[CMSG_SPACE(sizeof(int) * BATCH_FDS)];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	struct cmsghdr *c;

	if (n)
		*n = 0;
	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != sizeof(*m))
		return false;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		unsigned int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		if (fds && n) {
			memcpy(fds, CMSG_DATA(c), k * sizeof(int));
			*n = k;
		}
	}
	return true;
}

/* Start this program as "--child ROLE"; *@sock gets our end. */
static pid_t spawn_child(const char *role, int *sock)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		char fdstr[16];
		int fd = dup(sv[1]);	/* without O_CLOEXEC */

		snprintf(fdstr, sizeof(fdstr), "%d", fd);
		execl(self_exe, self_exe, "--child", role, fdstr, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- children ---- */

static void child_setup(void)
{
	scrub_hsa_env();
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		exit(10);
	kfdsync = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	if (kfdsync < 0)
		exit(11);
}

/* A peer: an event with the id the parent names; report its fence. */
static int child_peer(int sock)
{
	HsaEvent *ev[16];
	unsigned int n = 0;
	struct relay relay;
	struct msg m;
	int fence;

	child_setup();
	if (!msg_recv(sock, &m, NULL, NULL))
		return 12;
	/* Fresh process: ids count up from 1; create until ours matches. */
	do {
		ev[n] = create_event(HSA_EVENTTYPE_SIGNAL, false);
		if (!ev[n])
			return 13;
	} while (ev[n]->EventId != (uint32_t)m.val && ++n < ARRAY_SIZE(ev));
	if (n == ARRAY_SIZE(ev))
		return 14;
	if (__ev_register(kfdsync, ev[n]->EventId, slot_addr(ev[n]), NULL))
		return 15;
	fence = __export(kfdsync, ev[n]->EventId, 0, 0);
	if (fence < 0)
		return 16;
	relay_start(&relay, kfdsync, ev[n]);
	msg_send(sock, MSG_READY, (int32_t)ev[n]->EventId, NULL, 0);

	while (msg_recv(sock, &m, NULL, NULL) && m.cmd != MSG_EXIT) {
		if (m.cmd == MSG_SET)
			hsaKmtSetEvent(ev[n]);
		msg_send(sock, MSG_RESULT, readable(fence, m.val), NULL, 0);
	}
	relay_stop(&relay);
	close(fence);
	do
		hsaKmtDestroyEvent(ev[n]);
	while (n--);
	return 0;
}

/* The owner of OWNER_FENCES fences, which it hands over and then dies. */
static int child_owner(int sock)
{
	int fds[BATCH_FDS];
	unsigned int i, n = 0;
	HsaEvent *ev;

	child_setup();
	ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!ev || __ev_register(kfdsync, ev->EventId, slot_addr(ev), NULL))
		return 12;
	for (i = 0; i < OWNER_FENCES; i++) {
		fds[n] = __export(kfdsync, ev->EventId, 0, 0);
		if (fds[n] < 0) {
			fprintf(stderr, "export %u: %s\n", i, strerror(-fds[n]));
			return 13;
		}
		if (++n == BATCH_FDS || i == OWNER_FENCES - 1) {
			msg_send(sock, MSG_FDS, (int32_t)n, fds, n);
			while (n)
				close(fds[--n]);
		}
	}
	msg_send(sock, MSG_DONE, 0, NULL, 0);
	for (;;)
		pause();
}

/* A process whose queue gets a hardware exception: report its fences. */
static int child_hw_exception(int sock)
{
	struct kfdsync_event_query q;
	HsaEvent *ev;
	uint32_t cq;
	int fence, born;

	child_setup();
	sim = kfdsim_open();
	if (sim < 0)
		return 12;
	cq = queue_create(sim);
	ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!ev || __ev_register(kfdsync, ev->EventId, slot_addr(ev), NULL))
		return 13;
	fence = __export(kfdsync, ev->EventId, 0, 0);
	if (fence < 0 || readable(fence, 0))
		return 14;
	if (kfdsim_inject(sim, cq, KFDSIM_INJECT_HW_EXCEPTION))
		return 15;
	readable(fence, WAIT_MS);
	msg_send(sock, MSG_RESULT, fence_status(fence), NULL, 0);
	/* Sticky: a later export is born with the error. */
	born = __export(kfdsync, ev->EventId, 0, 0);
	msg_send(sock, MSG_RESULT, born < 0 ? born : fence_status(born), NULL, 0);
	if (__ev_query(kfdsync, ev->EventId, &q))
		return 16;
	msg_send(sock, MSG_RESULT, q.error, NULL, 0);
	close(fence);
	if (born >= 0)
		close(born);
	hsaKmtDestroyEvent(ev);
	kfdsim_queue_destroy(sim, cq);
	close(sim);
	return 0;
}

/* Events area of the caller's amdkfd process: KFD_SIGNAL_EVENT_LIMIT slots. */
static void unmap_events_area(const HsaEvent *ev)
{
	munmap((void *)(uintptr_t)(slot_addr(ev) - (uint64_t)ev->EventId * 8), 4096 * 8);
}

/*
 * A process that hands a pending fence to the parent, then lets go of
 * /dev/kfd entirely (so amdgpu can be unloaded) but keeps its context.
 */
static int child_amdgpu(int sock)
{
	struct msg m;
	HsaEvent *ev;
	int fence;

	child_setup();
	ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!ev || __ev_register(kfdsync, ev->EventId, slot_addr(ev), NULL))
		return 12;
	fence = __export(kfdsync, ev->EventId, 0, 0);
	if (fence < 0)
		return 13;
	msg_send(sock, MSG_FDS, 1, &fence, 1);
	close(fence);
	/* Off /dev/kfd; the event stays in amdkfd until amdgpu goes. */
	unmap_events_area(ev);
	hsaKmtCloseKFD();
	msg_send(sock, MSG_READY, 0, NULL, 0);
	while (msg_recv(sock, &m, NULL, NULL) && m.cmd != MSG_EXIT)
		;
	return 0;
}

static int child_main(const char *role, const char *sockstr)
{
	int sock = atoi(sockstr);
	struct kfdsync_info info = { 0 };
	int fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, KFDSYNC_IOCTL_INFO, &info))
		return 9;
	close(fd);
	relay_mode = info.info_flags & KFDSYNC_INFO_RELAY_FORCED;
	if (!strcmp(role, "peer"))
		return child_peer(sock);
	if (!strcmp(role, "owner"))
		return child_owner(sock);
	if (!strcmp(role, "hw_exception"))
		return child_hw_exception(sock);
	if (!strcmp(role, "amdgpu"))
		return child_amdgpu(sock);
	return 8;
}

/* ---- tests ---- */

static HsaEvent *ev1, *ev2;
static struct relay relay1;

/* 2 subtests */
static void test_register(void)
{
	struct kfdsync_event_query q;
	uint64_t age = 99;
	int ret;

	ret = __ev_register(kfdsync, ev1->EventId, slot_addr(ev1), &age);
	tap_ok(!ret && age == 0, "event_register_age_zero (%d, age %" PRIu64 ")", ret, age);
	if (ret)
		tap_bail("cannot register event %u: %s", ev1->EventId, strerror(-ret));
	relay_start(&relay1, kfdsync, ev1);

	ret = __ev_query(kfdsync, ev1->EventId, &q);
	tap_ok(!ret && q.age == 0 && !q.error && !q.pending &&
	       q.source == (relay_mode ? KFDSYNC_SOURCE_RELAY : KFDSYNC_SOURCE_HOOKS),
	       "event_query_source_%s (source %u)", relay_mode ? "relay" : "hooks", q.source);
}

/* 5 subtests */
static void test_release_mem(void)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId);
	uint64_t irqs = queue_status(sim, queue).interrupts, end;
	struct sync_fence_info fi;
	char name[64];
	int fence, status;

	fence = export(kfdsync, ev1->EventId, age);
	tap_ok(!readable(fence, 0) && fence_status(fence) == 0,
	       "sync_file_pending_before_submit");

	end = submit_signal(queue, ev1, 50000);
	tap_ok(readable(fence, WAIT_MS) && completed_before_wake(queue, end, irqs),
	       "sync_file_signalled_after_release_mem");

	status = fence_info(fence, &fi);
	snprintf(name, sizeof(name), "kfdsync:%d:ev%u", (int)getpid(), ev1->EventId);
	tap_ok(status == 1 && !strcmp(fi.driver_name, "kfdsync") && !strcmp(fi.obj_name, name),
	       "sync_file_info_names (status %d, driver '%s', timeline '%s')", status,
	       fi.driver_name, fi.obj_name);
	close(fence);

	tap_ok(wait_age(kfdsync, ev1->EventId, age + 1) &&
	       ev_age(kfdsync, ev1->EventId) == age + 1, "event_age_counts_one_signal");

	/* A fence exported now waits for the next signal: the CPU's. */
	age = ev_age(kfdsync, ev1->EventId);
	fence = export(kfdsync, ev1->EventId, age);
	tap_ok(!readable(fence, 0) && hsaKmtSetEvent(ev1) == HSAKMT_STATUS_SUCCESS &&
	       readable(fence, WAIT_MS) && fence_status(fence) == 1,
	       "sync_file_signalled_by_set_event");
	close(fence);
	wait_age(kfdsync, ev1->EventId, age + 1);
}

/* 3 subtests */
static void test_eventfd(void)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId), irqs, end, val = 0;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), ret;
	bool ok;

	if (efd < 0)
		tap_bail("eventfd: %s", strerror(errno));
	ret = __export_eventfd(kfdsync, ev1->EventId, age, efd);
	tap_ok(!ret && !readable(efd, 0), "eventfd_pending_before_submit (%d)", ret);

	irqs = queue_status(sim, queue).interrupts;
	end = submit_signal(queue, ev1, 50000);
	ok = readable(efd, WAIT_MS) && completed_before_wake(queue, end, irqs) &&
	     read(efd, &val, sizeof(val)) == sizeof(val);
	tap_ok(ok && val == 1, "eventfd_signalled_after_release_mem (count %" PRIu64 ")", val);
	wait_age(kfdsync, ev1->EventId, age + 1);

	age = ev_age(kfdsync, ev1->EventId);
	ret = __export_eventfd(kfdsync, ev1->EventId, age, efd);
	tap_ok(!ret && !readable(efd, 0) && hsaKmtSetEvent(ev1) == HSAKMT_STATUS_SUCCESS &&
	       readable(efd, WAIT_MS), "eventfd_signalled_by_set_event");
	wait_age(kfdsync, ev1->EventId, age + 1);
	close(efd);
}

/* 2 subtests */
static void test_born_signalled(void)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId), end;
	int fence;

	/* Submit-time age, signal, then export: born signalled. */
	end = submit_signal(queue, ev1, 0);
	if (kfdsim_queue_wait(sim, queue, end, WAIT_MS))
		tap_bail("queue did not complete");
	wait_age(kfdsync, ev1->EventId, age + 1);
	fence = export(kfdsync, ev1->EventId, age);
	tap_ok(readable(fence, 0) && fence_status(fence) == 1, "export_born_signalled");
	close(fence);

	/* Export at the current age: nothing signals, it stays pending. */
	fence = export(kfdsync, ev1->EventId, age + 1);
	tap_ok(!readable(fence, 300) && fence_status(fence) == 0,
	       "export_after_age_stays_pending");
	close(fence);
}

/*
 * 2 subtests: an event beyond the first page of amdkfd's 32 KiB events area
 * (ids 512 and up; amdkfd allocates the area as one block of 8 pages).
 */
static void test_high_id(void)
{
	static HsaEvent *evs[600];
	unsigned int n = 0, i;
	HsaEvent *high = NULL;
	struct relay relay;
	uint64_t irqs, end;
	int ret, fence;

	while (n < ARRAY_SIZE(evs) && !high) {
		evs[n] = new_event();
		if (evs[n]->EventId >= 512 + 7)
			high = evs[n];
		n++;
	}
	if (!high)
		tap_bail("no event id beyond 519 after %u events", n);
	ret = __ev_register(kfdsync, high->EventId, slot_addr(high), NULL);
	tap_ok(!ret, "event_register_beyond_first_page (id %u: %s)", high->EventId,
	       strerror(-ret));
	if (ret) {
		tap_skip("not registered", "sync_file_signalled_beyond_first_page");
	} else {
		relay_start(&relay, kfdsync, high);
		fence = export(kfdsync, high->EventId, 0);
		irqs = queue_status(sim, queue).interrupts;
		end = submit_signal(queue, high, 20000);
		tap_ok(readable(fence, WAIT_MS) && fence_status(fence) == 1 &&
		       completed_before_wake(queue, end, irqs),
		       "sync_file_signalled_beyond_first_page");
		close(fence);
		relay_stop(&relay);
	}
	for (i = 0; i < n; i++)
		hsaKmtDestroyEvent(evs[i]);
}

/*
 * 3 subtests: a slot write is one signal, counted when amdkfd acknowledges
 * it, however many interrupts come. The GPU writes ev1's slot without an
 * interrupt; two interrupts for another event follow (amdkfd's exact-id
 * path sets only that one and leaves ev1's slot set): amdkfd delivered
 * nothing of ev1, and kfdsync counts nothing, in either mode. An interrupt
 * for ev1 then makes amdkfd acknowledge and set it: one signal. The next
 * write is a new signal.
 */
static void test_slot_counted_once(void)
{
	HsaEvent *ev3 = new_event();
	uint64_t age = ev_age(kfdsync, ev1->EventId), a1, a2, a3, end;
	uint32_t dw[64];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	int i;

	/* Earlier sets nobody waited for left ev1 set in amdkfd (hooks mode). */
	if (!relay_mode)
		hsaKmtResetEvent(ev1);
	pm4_release_mem(&b, slot_addr(ev1), ev1->EventId, PM4_RELEASE_MEM_DATA_64,
			PM4_RELEASE_MEM_INT_NONE, 0);
	end = submit(sim, queue, &b);
	if (kfdsim_queue_wait(sim, queue, end, WAIT_MS))
		tap_bail("queue did not complete");
	for (i = 0; i < 2; i++) {
		submit_signal(queue, ev3, 0);
		/* amdkfd sets ev3 after kfdsync's entry hook looked. */
		if (hsaKmtWaitOnEvent(ev3, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
			tap_bail("ev3 not signalled");
	}
	a1 = ev_age(kfdsync, ev1->EventId) - age;
	tap_ok(a1 == 0, "gpu_written_slot_not_counted_before_acknowledged (+%" PRIu64 ")",
	       a1);

	pm4_reset(&b);
	pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE, PM4_RELEASE_MEM_INT_ONLY,
			ev1->EventId);
	submit(sim, queue, &b);
	if (relay_mode) {
		wait_age(kfdsync, ev1->EventId, age + 1);
	} else {
		if (hsaKmtWaitOnEvent(ev1, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
			tap_bail("ev1 not signalled");
	}
	a2 = ev_age(kfdsync, ev1->EventId) - age;
	tap_ok(a2 == 1 && slot_of(ev1) == UNSIGNALED_SLOT,
	       "gpu_acknowledged_slot_counted_once (+%" PRIu64 ")", a2);

	submit_signal(queue, ev1, 0);
	wait_age(kfdsync, ev1->EventId, age + 2);
	a3 = ev_age(kfdsync, ev1->EventId) - age;
	tap_ok(a3 == 2, "gpu_next_write_counted (+%" PRIu64 ")", a3);
	hsaKmtDestroyEvent(ev3);
}

/*
 * 2 subtests. An interrupt that names a registered event whose slot is set
 * is handled by amdkfd for that event alone (its exact-id path), and kfdsync
 * looks at that event alone too: ev1's slot, written without an interrupt,
 * is not counted by ev4's interrupt (amdkfd does not set ev1 either), and
 * is counted once by its own.
 */
static void test_exact_id_interrupt(void)
{
	HsaEvent *ev4 = new_event();
	struct kfdsync_event_unregister u = { .event_id = ev4->EventId };
	uint64_t age1, age4, d1, d4, end;
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	if (relay_mode) {
		tap_skip("relay mode: no interrupt hook", "exact_id_interrupt_counts_named_event_only");
		tap_skip("relay mode: no interrupt hook", "exact_id_interrupt_then_own_interrupt");
		hsaKmtDestroyEvent(ev4);
		return;
	}
	if (__ev_register(kfdsync, ev4->EventId, slot_addr(ev4), NULL))
		tap_bail("register ev4: %s", strerror(errno));
	hsaKmtResetEvent(ev1);
	age1 = ev_age(kfdsync, ev1->EventId);
	age4 = ev_age(kfdsync, ev4->EventId);
	pm4_release_mem(&b, slot_addr(ev1), ev1->EventId, PM4_RELEASE_MEM_DATA_64,
			PM4_RELEASE_MEM_INT_NONE, 0);
	end = submit(sim, queue, &b);
	if (kfdsim_queue_wait(sim, queue, end, WAIT_MS))
		tap_bail("queue did not complete");
	submit_signal(queue, ev4, 0);
	if (hsaKmtWaitOnEvent(ev4, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
		tap_bail("ev4 not signalled");
	wait_age(kfdsync, ev4->EventId, age4 + 1);
	d1 = ev_age(kfdsync, ev1->EventId) - age1;
	d4 = ev_age(kfdsync, ev4->EventId) - age4;
	tap_ok(d4 == 1 && d1 == 0 && slot_of(ev1) != UNSIGNALED_SLOT,
	       "exact_id_interrupt_counts_named_event_only (ev1 +%" PRIu64 ", ev4 +%" PRIu64 ")",
	       d1, d4);

	pm4_reset(&b);
	pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE, PM4_RELEASE_MEM_INT_ONLY,
			ev1->EventId);
	submit(sim, queue, &b);
	if (hsaKmtWaitOnEvent(ev1, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
		tap_bail("ev1 not signalled");
	wait_age(kfdsync, ev1->EventId, age1 + 1);
	usleep(20000);	/* let a wrong second count show */
	d1 = ev_age(kfdsync, ev1->EventId) - age1;
	tap_ok(d1 == 1, "exact_id_interrupt_then_own_interrupt (ev1 +%" PRIu64 ")", d1);

	if (ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u))
		tap_bail("unregister ev4: %s", strerror(errno));
	hsaKmtDestroyEvent(ev4);
}

/* 4 subtests */
static void test_two_processes(void)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId), end;
	struct msg m = { 0 };
	int sock, fence, res_gpu = -1, res_cpu = -1, res_own = -1, code;
	pid_t pid = spawn_child("peer", &sock);

	msg_send(sock, MSG_READY, (int32_t)ev1->EventId, NULL, 0);
	if (!msg_recv(sock, &m, NULL, NULL) || m.cmd != MSG_READY) {
		tap_ok(false, "two_processes_same_event_id (child status %d)", reap(pid));
		tap_skip("no peer", "foreign_gpu_signal_not_seen");
		tap_skip("no peer", "foreign_cpu_signal_not_seen");
		tap_skip("no peer", "own_signal_signals_only_own");
		close(sock);
		return;
	}
	tap_ok((uint32_t)m.val == ev1->EventId, "two_processes_same_event_id (%u)", m.val);

	fence = export(kfdsync, ev1->EventId, age);
	/* Our GPU signal on the same id: the peer's fence stays pending. */
	end = submit_signal(queue, ev1, 0);
	kfdsim_queue_wait(sim, queue, end, WAIT_MS);
	readable(fence, WAIT_MS);
	msg_send(sock, MSG_CHECK, 200, NULL, 0);
	if (msg_recv(sock, &m, NULL, NULL))
		res_gpu = m.val;
	tap_ok(readable(fence, 0) && res_gpu == 0, "foreign_gpu_signal_not_seen (peer %d)",
	       res_gpu);
	close(fence);
	wait_age(kfdsync, ev1->EventId, age + 1);

	age = ev_age(kfdsync, ev1->EventId);
	hsaKmtSetEvent(ev1);
	wait_age(kfdsync, ev1->EventId, age + 1);
	msg_send(sock, MSG_CHECK, 200, NULL, 0);
	if (msg_recv(sock, &m, NULL, NULL))
		res_cpu = m.val;
	tap_ok(res_cpu == 0, "foreign_cpu_signal_not_seen (peer %d)", res_cpu);

	/* The peer sets its own event: its fence signals, ours does not. */
	age = ev_age(kfdsync, ev1->EventId);
	fence = export(kfdsync, ev1->EventId, age);
	msg_send(sock, MSG_SET, WAIT_MS, NULL, 0);
	if (msg_recv(sock, &m, NULL, NULL))
		res_own = m.val;
	tap_ok(res_own == 1 && !readable(fence, 200), "own_signal_signals_only_own (peer %d)",
	       res_own);
	close(fence);

	msg_send(sock, MSG_EXIT, 0, NULL, 0);
	code = reap(pid);
	if (code)
		tap_diag("peer exited with %d", code);
	close(sock);
}

#define DEBUGFS_EVENTS	"/sys/kernel/debug/kfdsync/events"

/*
 * 1 subtest: <debugfs>/kfdsync/events lists our event with its age, source
 * and pending fences. Lines: ctx tgid source id age slot pending error.
 */
static void test_debugfs(void)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId), l_age;
	const char *want = relay_mode ? "relay" : "hooks";
	struct kfdsync_event_query q;
	unsigned int l_id, l_pending;
	char line[256], source[16];
	int fence, l_tgid, found = 0;
	FILE *f;

	if (access(DEBUGFS_EVENTS, R_OK) &&
	    (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) ||
	     access(DEBUGFS_EVENTS, R_OK))) {
		tap_skip("debugfs not available", "debugfs_events_lists_event");
		return;
	}
	fence = export(kfdsync, ev1->EventId, age);
	if (__ev_query(kfdsync, ev1->EventId, &q) || !q.pending)
		tap_bail("EVENT_QUERY: no pending fence");
	f = fopen(DEBUGFS_EVENTS, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*u %d %15s %u %" SCNu64 " %*s %u", &l_tgid, source, &l_id,
			   &l_age, &l_pending) != 5)
			continue;
		if (l_tgid == getpid() && l_id == ev1->EventId)
			found = l_age == age && l_pending == q.pending && !strcmp(source, want) ?
				1 : -1;
	}
	if (f)
		fclose(f);
	tap_ok(found == 1, "debugfs_events_lists_event (%d: age %" PRIu64 " pending %u)", found,
	       age, q.pending);
	close(fence);
	/* The fence ends by its watchdog, or when the context closes. */
}

/* 2 subtests */
static void test_watchdog(void)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId);
	int64_t t0 = kfdsim_now_ns(), dt;
	int fence, status;

	fence = __export(kfdsync, ev1->EventId, age, (uint64_t)t0 + 100000000);
	if (fence < 0)
		tap_bail("export with deadline: %s", strerror(-fence));
	readable(fence, WAIT_MS);
	dt = kfdsim_now_ns() - t0;
	status = fence_status(fence);
	tap_ok(status == -ETIMEDOUT && dt >= 100000000 && dt < (int64_t)WAIT_MS * 1000000,
	       "watchdog_ends_fence_etimedout (status %d after %" PRId64 " ms)", status,
	       dt / 1000000);
	close(fence);

	/*
	 * A later fence at or below the expired seqno is born with -ETIMEDOUT
	 * (fences of a context end in order): move past it first.
	 */
	hsaKmtSetEvent(ev1);
	if (!wait_age(kfdsync, ev1->EventId, age + 1))
		tap_bail("ev1's set not counted");
	age = ev_age(kfdsync, ev1->EventId);
	/* A deadline past watchdog_max_ms is capped, not refused. */
	fence = __export(kfdsync, ev1->EventId, age, (uint64_t)t0 + 36000000000000ULL);
	tap_ok(fence >= 0 && fence_status(fence) == 0, "watchdog_deadline_capped (%d)", fence);
	if (fence >= 0)
		close(fence);
}

/* ---- the bad inputs table ---- */

static uint64_t unmapped_page;	/* a page-aligned address with nothing mapped */
static void *anon_page;
static uint32_t destroyed_id;

static uint64_t slot_offset(uint32_t id)
{
	return (uint64_t)id * 8 % 4096;
}

static int bad_register_flags(void)
{
	struct kfdsync_event_register a = { .event_id = ev2->EventId,
					    .slot_addr = slot_addr(ev2), .flags = 1 };
	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_REGISTER, &a);
}

static int bad_register(uint32_t id, uint64_t slot)
{
	struct kfdsync_event_register a = { .event_id = id, .slot_addr = slot };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_REGISTER, &a);
}

static int bad_register_id_zero(void)
{
	return bad_register(0, slot_addr(ev2) - (uint64_t)ev2->EventId * 8);
}

static int bad_register_id_limit(void)
{
	return bad_register(4096, slot_addr(ev2));
}

static int bad_register_misaligned(void)
{
	return bad_register(ev2->EventId, slot_addr(ev2) + 4);
}

static int bad_register_unmapped(void)
{
	return bad_register(ev2->EventId, unmapped_page + slot_offset(ev2->EventId));
}

static int bad_register_anon_memory(void)
{
	return bad_register(ev2->EventId, (uintptr_t)anon_page + slot_offset(ev2->EventId));
}

static int bad_register_other_ids_slot(void)
{
	return bad_register(ev2->EventId, slot_addr(ev1));
}

static int bad_register_duplicate(void)
{
	return bad_register(ev1->EventId, slot_addr(ev1));
}

static int bad_register_bad_pointer(void)
{
	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_REGISTER, (void *)8);
}

static int bad_unregister_flags(void)
{
	struct kfdsync_event_unregister a = { .event_id = ev1->EventId, .flags = 1 };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &a);
}

static int bad_unregister_unknown(void)
{
	struct kfdsync_event_unregister a = { .event_id = ev2->EventId };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &a);
}

static int bad_query_flags(void)
{
	struct kfdsync_event_query a = { .event_id = ev1->EventId, .flags = 1 };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_QUERY, &a);
}

static int bad_query_unknown(void)
{
	struct kfdsync_event_query a = { .event_id = 4000 };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_QUERY, &a);
}

static int bad_export(uint32_t id, uint32_t flags, uint32_t pad, uint64_t age)
{
	struct kfdsync_export a = { .event_id = id, .flags = flags, .pad = pad, .age = age };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, &a);
}

static int bad_export_flags(void)
{
	return bad_export(ev1->EventId, 1, 0, 0);
}

static int bad_export_pad(void)
{
	return bad_export(ev1->EventId, 0, 1, 0);
}

static int bad_export_unknown_id(void)
{
	return bad_export(ev2->EventId, 0, 0, 0);
}

static int bad_export_future_age(void)
{
	return bad_export(ev1->EventId, 0, 0, ev_age(kfdsync, ev1->EventId) + 1);
}

static int bad_export_destroyed_event(void)
{
	return bad_export(destroyed_id, 0, 0, 0);
}

static int bad_export_bad_pointer(void)
{
	return ioctl(kfdsync, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, (void *)8);
}

static int bad_export_eventfd(int fd, uint32_t flags)
{
	struct kfdsync_export a = { .event_id = ev1->EventId, .flags = flags, .fd = fd,
				    .age = ev_age(kfdsync, ev1->EventId) };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EXPORT_EVENTFD, &a);
}

static int bad_eventfd_not_eventfd(void)
{
	/* A sync_file is not an eventfd. */
	int fence = export(kfdsync, ev1->EventId, ev_age(kfdsync, ev1->EventId));
	int ret = bad_export_eventfd(fence, 0), err = errno;

	close(fence);
	errno = err;
	return ret;
}

static int bad_eventfd_closed_fd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	close(fd);
	return bad_export_eventfd(fd, 0);
}

static int bad_eventfd_flags(void)
{
	int fd = eventfd(0, EFD_CLOEXEC), ret, err;

	ret = bad_export_eventfd(fd, 1);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

static int bad_relay_flags(void)
{
	struct kfdsync_relay_signal a = { .event_id = ev1->EventId, .flags = 1 };

	return ioctl(kfdsync, KFDSYNC_IOCTL_RELAY_SIGNAL, &a);
}

static int bad_relay_unknown(void)
{
	struct kfdsync_relay_signal a = { .event_id = ev2->EventId };

	return ioctl(kfdsync, KFDSYNC_IOCTL_RELAY_SIGNAL, &a);
}

static int bad_relay_hooks_active(void)
{
	struct kfdsync_relay_signal a = { .event_id = ev1->EventId };

	if (relay_mode) {	/* not applicable: report the expected errno */
		errno = EBUSY;
		return -1;
	}
	return ioctl(kfdsync, KFDSYNC_IOCTL_RELAY_SIGNAL, &a);
}

static int bad_unknown_ioctl(void)
{
	struct kfdsync_export a = { 0 };

	return ioctl(kfdsync, _IOWR(KFDSYNC_IOCTL_BASE, 0x3f, struct kfdsync_export), &a);
}

static const struct bad_input {
	const char *name;
	int err;
	int (*call)(void);
} bad_inputs[] = {
	{ "register_unknown_flags", EINVAL, bad_register_flags },
	{ "register_id_zero", EINVAL, bad_register_id_zero },
	{ "register_id_beyond_limit", EINVAL, bad_register_id_limit },
	{ "register_slot_misaligned", EINVAL, bad_register_misaligned },
	{ "register_slot_unmapped", EINVAL, bad_register_unmapped },
	{ "register_slot_anonymous_memory", EINVAL, bad_register_anon_memory },
	{ "register_slot_of_another_id", EINVAL, bad_register_other_ids_slot },
	{ "register_duplicate", EEXIST, bad_register_duplicate },
	{ "register_bad_pointer", EFAULT, bad_register_bad_pointer },
	{ "unregister_unknown_flags", EINVAL, bad_unregister_flags },
	{ "unregister_unknown_id", ENOENT, bad_unregister_unknown },
	{ "query_unknown_flags", EINVAL, bad_query_flags },
	{ "query_unknown_id", ENOENT, bad_query_unknown },
	{ "export_unknown_flags", EINVAL, bad_export_flags },
	{ "export_pad_nonzero", EINVAL, bad_export_pad },
	{ "export_unknown_id", ENOENT, bad_export_unknown_id },
	{ "export_age_in_future", EINVAL, bad_export_future_age },
	{ "export_unregistered_event", ENOENT, bad_export_destroyed_event },
	{ "export_bad_pointer", EFAULT, bad_export_bad_pointer },
	{ "export_eventfd_not_an_eventfd", EINVAL, bad_eventfd_not_eventfd },
	{ "export_eventfd_closed_fd", EBADF, bad_eventfd_closed_fd },
	{ "export_eventfd_unknown_flags", EINVAL, bad_eventfd_flags },
	{ "relay_unknown_flags", EINVAL, bad_relay_flags },
	{ "relay_unknown_id", ENOENT, bad_relay_unknown },
	{ "relay_refused_while_hooks_active", EBUSY, bad_relay_hooks_active },
	{ "unknown_ioctl", ENOTTY, bad_unknown_ioctl },
};

static void test_bad_inputs(void)
{
	struct kfdsync_event_unregister u;
	unsigned int i;
	void *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	unmapped_page = (uintptr_t)p;
	munmap(p, 4096);
	anon_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (anon_page == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	memset(anon_page, 0xff, 4096);

	/* ev2: registered, then unregistered. */
	if (__ev_register(kfdsync, ev2->EventId, slot_addr(ev2), NULL))
		tap_bail("register ev2 failed");
	u = (struct kfdsync_event_unregister){ .event_id = ev2->EventId };
	if (ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u))
		tap_bail("unregister ev2: %s", strerror(errno));
	destroyed_id = ev2->EventId;

	for (i = 0; i < ARRAY_SIZE(bad_inputs); i++)
		tap_errno(bad_inputs[i].call(), bad_inputs[i].err, "bad_input_%s",
			  bad_inputs[i].name);
	munmap(anon_page, 4096);
}

/* 3 subtests: limits, and a context used by another process. */
static void test_limits(void)
{
	int old_events = param_read("max_events"), old_fences = param_read("max_fences");
	HsaEvent *ev3 = new_event();
	int fd, f1, f2, f3, ret;
	pid_t pid;

	if (old_events < 0 || old_fences < 0 || !param_write("max_events", 2) ||
	    !param_write("max_fences", 2)) {
		tap_skip("cannot set module parameters", "limit_max_events_enospc");
		tap_skip("cannot set module parameters", "limit_max_fences_enospc");
	} else {
		fd = open_kfdsync();
		param_write("max_events", old_events);
		param_write("max_fences", old_fences);
		ret = __ev_register(fd, ev1->EventId, slot_addr(ev1), NULL);
		if (!ret)
			ret = __ev_register(fd, ev2->EventId, slot_addr(ev2), NULL);
		if (!ret)
			ret = __ev_register(fd, ev3->EventId, slot_addr(ev3), NULL);
		tap_ok(ret == -ENOSPC, "limit_max_events_enospc (%s)", strerror(-ret));
		f1 = __export(fd, ev1->EventId, 0, 0);
		f2 = __export(fd, ev1->EventId, 0, 0);
		f3 = __export(fd, ev1->EventId, 0, 0);
		tap_ok(f1 >= 0 && f2 >= 0 && f3 == -ENOSPC, "limit_max_fences_enospc (%d)", f3);
		if (f1 >= 0)
			close(f1);
		if (f2 >= 0)
			close(f2);
		if (f3 >= 0)
			close(f3);
		close(fd);
	}
	hsaKmtDestroyEvent(ev3);

	/* A forked child inherits the file, not the right to use it. */
	pid = fork();
	if (!pid) {
		struct kfdsync_event_query q = { .event_id = ev1->EventId };

		_exit(ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_QUERY, &q) == -1 && errno == EPERM ?
		      0 : 1);
	}
	ret = reap(pid);
	tap_ok(ret == 0, "context_refuses_other_process_eperm (child %d)", ret);
}

/* 2 subtests */
static void test_owner_killed(void)
{
	int old_fences = param_read("max_fences");
	struct rlimit rl = { 8192, 8192 };
	static int fds[OWNER_FENCES];
	static struct pollfd pfd[OWNER_FENCES];
	unsigned int n = 0, k, ready = 0, canceled = 0, pending_before = 0;
	struct msg m;
	int64_t t0, dt;
	int sock;
	pid_t pid;

	if (old_fences < 0 || setrlimit(RLIMIT_NOFILE, &rl) ||
	    !param_write("max_fences", OWNER_FENCES + 1)) {
		tap_skip("cannot raise limits", "owner_killed_fences_received");
		tap_skip("cannot raise limits", "owner_killed_fences_canceled");
		return;
	}
	pid = spawn_child("owner", &sock);
	while (msg_recv(sock, &m, fds + n, &k) && m.cmd == MSG_FDS && n + k <= OWNER_FENCES)
		n += k;
	param_write("max_fences", old_fences);
	for (k = 0; k < n; k++) {
		pfd[k] = (struct pollfd){ .fd = fds[k], .events = POLLIN };
		pending_before += fence_status(fds[k]) == 0;
	}
	tap_ok(n == OWNER_FENCES && m.cmd == MSG_DONE && pending_before == n,
	       "owner_killed_fences_received (%u, %u pending)", n, pending_before);

	kill(pid, SIGKILL);
	t0 = kfdsim_now_ns();
	while (kfdsim_now_ns() - t0 < (int64_t)WAIT_MS * 1000000) {
		if (poll(pfd, n, 100) < 0 && errno != EINTR)
			break;
		for (k = 0, ready = 0; k < n; k++)
			ready += !!(pfd[k].revents & POLLIN);
		if (ready == n)
			break;
	}
	dt = kfdsim_now_ns() - t0;
	for (k = 0; k < n; k++) {
		canceled += fence_status(fds[k]) == -ECANCELED;
		close(fds[k]);
	}
	reap(pid);
	close(sock);
	tap_ok(n && ready == n && canceled == n && dt < 5000000000LL,
	       "owner_killed_fences_canceled (%u of %u, %u ECANCELED, %" PRId64 " ms)", ready,
	       n, canceled, dt / 1000000);
}

/* 3 subtests */
static void test_hw_exception(void)
{
	int res[3] = { 1, 1, 1 }, sock, i, code;
	struct msg m;
	pid_t pid;

	if (relay_mode) {
		tap_skip("relay mode: no exception hooks", "hw_exception_fence_eio");
		tap_skip("relay mode: no exception hooks", "hw_exception_sticky_export_eio");
		tap_skip("relay mode: no exception hooks", "hw_exception_query_error");
		return;
	}
	pid = spawn_child("hw_exception", &sock);
	for (i = 0; i < 3 && msg_recv(sock, &m, NULL, NULL); i++)
		res[i] = m.val;
	code = reap(pid);
	close(sock);
	if (code)
		tap_diag("hw_exception child exited with %d", code);
	tap_ok(res[0] == -EIO, "hw_exception_fence_eio (%d)", res[0]);
	tap_ok(res[1] == -EIO, "hw_exception_sticky_export_eio (%d)", res[1]);
	tap_ok(res[2] == -EIO, "hw_exception_query_error (%d)", res[2]);
}

/* 3 subtests; closes everything kfdsync-related first. */
static void test_rmmod(void)
{
	const char *skip = NULL;
	char params[64];
	int fence, ret;

	if (!getenv("KFDSYNC_KMOD_DIR") || geteuid())
		skip = "needs the guest (KFDSYNC_KMOD_DIR, root)";
	fence = export(kfdsync, ev1->EventId, ev_age(kfdsync, ev1->EventId));
	relay_stop(&relay1);
	snprintf(params, sizeof(params), "hooks=%d", relay_mode ? 0 : 1);
	/* Closing the context cancels the fence; the sync_file keeps it. */
	close(kfdsync);
	kfdsync = -1;
	readable(fence, WAIT_MS);
	if (skip) {
		tap_ok(fence_status(fence) == -ECANCELED, "context_close_cancels_fence");
		tap_skip(skip, "rmmod_refused_while_sync_file_held");
		tap_skip(skip, "rmmod_after_sync_file_closed");
		close(fence);
		return;
	}
	tap_ok(fence_status(fence) == -ECANCELED, "context_close_cancels_fence");

	ret = kmod_unload("kfdsync", 1);
	tap_ok(ret == -EWOULDBLOCK || ret == -EBUSY || ret == -EAGAIN,
	       "rmmod_refused_while_sync_file_held (%s)", strerror(-ret));
	if (!ret)
		kmod_load_project("kmod/kfdsync.ko", params);

	close(fence);
	ret = kmod_unload("kfdsync", 50);
	if (!ret) {
		int lret = kmod_load_project("kmod/kfdsync.ko", params);

		if (lret)
			tap_diag("reload kfdsync %s: %s", params, strerror(-lret));
		ret = lret;
	}
	tap_ok(!ret, "rmmod_after_sync_file_closed (%s)", strerror(-ret));
}

static uint32_t info_hooks(int fd, uint32_t *flags)
{
	struct kfdsync_info info = { 0 };

	if (ioctl(fd, KFDSYNC_IOCTL_INFO, &info))
		return ~0U;
	*flags = info.info_flags;
	return info.hooks;
}

/*
 * 4 subtests: amdgpu unloads while a context exists and another process
 * holds a pending fence; the fence ends with -EIO, the hooks detach, and
 * attach again when amdgpu comes back. Needs everything of ours off
 * /dev/kfd: runs last, after the caller closed it.
 */
static void test_amdgpu_cycle(void)
{
	static const char *const names[] = {
		"amdgpu_unload_with_contexts", "amdgpu_gone_fence_eio",
		"amdgpu_gone_hooks_detached", "amdgpu_back_hooks_attached",
	};
	uint32_t hooks, flags = 0;
	int sock, fence = -1, ctx, ret, status = 1, code;
	unsigned int i, n = 0;
	struct msg m;
	pid_t pid;

	if (!getenv("KFDSYNC_KMOD_DIR") || geteuid()) {
		for (i = 0; i < ARRAY_SIZE(names); i++)
			tap_skip("needs the guest (KFDSYNC_KMOD_DIR, root)", "%s", names[i]);
		return;
	}
	ctx = open_kfdsync();
	pid = spawn_child("amdgpu", &sock);
	if (!msg_recv(sock, &m, &fence, &n) || m.cmd != MSG_FDS || n != 1 ||
	    !msg_recv(sock, &m, NULL, NULL) || m.cmd != MSG_READY)
		tap_bail("amdgpu child failed (status %d)", reap(pid));

	ret = kmod_unload("amdgpu", 50);
	tap_ok(!ret, "%s (%s)", names[0], strerror(-ret));
	if (!ret) {
		readable(fence, WAIT_MS);
		status = fence_status(fence);
	}
	tap_ok(status == -EIO, "%s (%d)", names[1], status);
	hooks = info_hooks(ctx, &flags);
	tap_ok(!ret && !hooks && !(flags & KFDSYNC_INFO_AMDKFD_PRESENT), "%s (%#x, %#x)",
	       names[2], hooks, flags);

	code = system("modprobe amdgpu");
	hooks = info_hooks(ctx, &flags);
	tap_ok(!code && (flags & KFDSYNC_INFO_AMDKFD_PRESENT) &&
	       hooks == (relay_mode ? 0 : (KFDSYNC_HOOK_GPU_INTERRUPT | KFDSYNC_HOOK_CPU_SET |
					   KFDSYNC_HOOK_HW_EXCEPTION | KFDSYNC_HOOK_VM_FAULT |
					   KFDSYNC_HOOK_RESET | KFDSYNC_HOOK_POISON |
					   KFDSYNC_HOOK_DESTROY | KFDSYNC_HOOK_FREE)),
	       "%s (%#x)", names[3], hooks);

	msg_send(sock, MSG_EXIT, 0, NULL, 0);
	code = reap(pid);
	if (code)
		tap_diag("amdgpu child exited with %d", code);
	close(sock);
	close(fence);
	close(ctx);
}

#define PLAN (2 + 5 + 3 + 2 + 2 + 3 + 2 + 4 + 1 + 2 + ARRAY_SIZE(bad_inputs) + 3 + 2 + 3 + 3 + 4)

int main(int argc, char **argv)
{
	struct kfdsync_info info = { 0 };

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child_main(argv[2], argv[3]);

	self_exe = "/proc/self/exe";
	scrub_hsa_env();
	require_sim_guest();
	if (access(KFDSYNC_DEV, F_OK)) {
		printf("TAP version 13\n1..0 # SKIP no %s (kfdsync not loaded)\n", KFDSYNC_DEV);
		return 0;
	}
	/* Children are this very binary. */
	{
		static char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = '\0';
			self_exe = exe;
		}
	}

	tap_plan(PLAN);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD failed");
	sim = kfdsim_open();
	if (sim < 0)
		tap_bail("kfdsim_open: %s", strerror(-sim));
	queue = queue_create(sim);
	kfdsync = open_kfdsync();
	if (ioctl(kfdsync, KFDSYNC_IOCTL_INFO, &info))
		tap_bail("INFO: %s", strerror(errno));
	relay_mode = info.info_flags & KFDSYNC_INFO_RELAY_FORCED;
	tap_diag("mode %s, hooks %#x", relay_mode ? "relay (hooks=0)" : "hooks", info.hooks);

	ev1 = new_event();
	ev2 = new_event();

	test_register();
	test_release_mem();
	test_eventfd();
	test_born_signalled();
	test_high_id();
	test_slot_counted_once();
	test_exact_id_interrupt();
	test_two_processes();
	test_debugfs();
	test_watchdog();
	test_bad_inputs();
	test_limits();
	test_owner_killed();
	test_hw_exception();
	test_rmmod();

	/* Off /dev/kfd entirely, so that amdgpu can go. */
	unmap_events_area(ev1);
	hsaKmtDestroyEvent(ev1);
	hsaKmtDestroyEvent(ev2);
	kfdsim_queue_destroy(sim, queue);
	close(sim);
	hsaKmtCloseKFD();
	test_amdgpu_cycle();
	return tap_exit();
}
