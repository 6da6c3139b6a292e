// SPDX-License-Identifier: MIT
/*
 * bridge_dispatch_race - kfdsync_ctx_dispatch() from several threads at
 * once (kfdsync.h, "Threads": any thread, any number of them), against
 * relayed imports whose completion eventfds reuse fd numbers. Run as
 * bridge_dispatch_race_relay (kfdsync in forced relay mode, where the
 * library sets imported KFD events); with the hooks there is nothing to
 * dispatch for imports and the program skips.
 *
 * - The stale wake-up, made to happen: thread B's epoll_wait() in
 *   dispatch returns import X's eventfd (number N) ready, and is held there
 *   (this program's epoll_wait() wraps libc's); meanwhile the main thread
 *   dispatches X (its event set, N closed) and imports Y, still pending,
 *   whose eventfd gets number N again. B then goes on with "N is ready":
 *   Y's event must not be set before Y's fence ends, and must be set after.
 * - Free-running: four threads dispatch in a loop while the main thread
 *   imports and ends fences; every import's event is set once, after its
 *   fence ended.
 */
#include <dlfcn.h>
#include <hsakmt.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "kfdsync.h"
#include "sim_test.h"
#include "tap.h"

/* The thread whose next epoll_wait() with results is held; 0 none. */
static pthread_t hold_thread;
static atomic_bool hold_armed, held, release_hold;

/*
 * libkfdsync's dispatch calls epoll_wait() through the PLT: this one is
 * found first. It holds the armed thread right after a wait that returned
 * something, as a preempted thread would be.
 */
int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	static int (*real)(int, struct epoll_event *, int, int);
	int n;

	if (!real)
		real = (int (*)(int, struct epoll_event *, int, int))dlsym(RTLD_NEXT, "epoll_wait");
	n = real(epfd, evs, max, timeout);
	if (n > 0 && atomic_load(&hold_armed) && pthread_equal(pthread_self(), hold_thread)) {
		atomic_store(&hold_armed, false);
		atomic_store(&held, true);
		while (!atomic_load(&release_hold))
			usleep(1000);
	}
	return n;
}

static struct kfdsync_ctx *ctx;

static void *dispatch_once(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)kfdsync_ctx_dispatch(ctx);
}

static bool is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strcmp(target, "anon_inode:[eventfd]");
}

/* The lowest fd number that is an eventfd and not in @before (a bit set below 1024). */
static int new_eventfd(const uint8_t *before)
{
	for (int fd = 0; fd < 1024; fd++)
		if (!(before[fd / 8] & (1u << (fd % 8))) && is_eventfd(fd))
			return fd;
	return -1;
}

static void eventfds(uint8_t *set)
{
	memset(set, 0, 128);
	for (int fd = 0; fd < 1024; fd++)
		if (is_eventfd(fd))
			set[fd / 8] |= 1u << (fd % 8);
}

static bool is_set(HsaEvent *ev, unsigned int ms)
{
	return hsaKmtWaitOnEvent(ev, ms) == HSAKMT_STATUS_SUCCESS;
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

static void stale_wakeup_test(void)
{
	HsaEvent *ex = create_event(HSA_EVENTTYPE_SIGNAL, false);
	HsaEvent *ey = create_event(HSA_EVENTTYPE_SIGNAL, false);
	struct kfdsync_timeline *tl = NULL;
	uint8_t before[128];
	pthread_t b;
	void *bret;
	int fx, fy, nx, ny, pfd, ret, n;
	bool x_set, y_early, y_set = false;

	if (!ex || !ey || kfdsync_timeline_new(&tl))
		tap_bail("events or timeline");
	pfd = kfdsync_ctx_get_poll_fd(ctx);
	fx = kfdsync_timeline_create_fence(tl, 1, "x");
	/* Made now, so that it does not take X's number when that is free. */
	fy = kfdsync_timeline_create_fence(tl, 2, "y");
	eventfds(before);
	ret = kfdsync_import_to_event(ctx, fx, ex->EventId);
	nx = new_eventfd(before);
	close(fx);
	if (ret || nx < 0 || pfd < 0)
		tap_bail("import x: %d, eventfd %d", ret, nx);
	kfdsync_timeline_inc(tl, 1);
	if (!readable(pfd, 10000))
		tap_bail("x's import never became ready");

	/* B sees "N ready" and is held there. */
	atomic_store(&release_hold, false);
	atomic_store(&held, false);
	if (pthread_create(&b, NULL, dispatch_once, NULL))
		tap_bail("pthread_create");
	hold_thread = b;
	atomic_store(&hold_armed, true);
	for (int i = 0; i < 10000 && !atomic_load(&held); i++)
		usleep(1000);
	if (!atomic_load(&held))
		tap_bail("thread B never got x's wake-up");

	/* Meanwhile: X dispatched here, N closed, Y's eventfd takes N. */
	n = kfdsync_ctx_dispatch(ctx);
	x_set = is_set(ex, 1000);
	eventfds(before);
	ret = kfdsync_import_to_event(ctx, fy, ey->EventId);
	ny = new_eventfd(before);
	close(fy);
	tap_ok(n == 1 && x_set && !ret && ny == nx,
	       "race_setup_x_dispatched_y_reuses_its_fd (dispatch %d, x %s, import %d, fd %d then %d)",
	       n, x_set ? "set" : "unset", ret, nx, ny);

	/* B goes on with the stale "N ready"; Y's fence has not ended. */
	atomic_store(&release_hold, true);
	pthread_join(b, &bret);
	y_early = is_set(ey, 200);
	tap_ok(!y_early, "race_stale_wakeup_sets_no_pending_import (thread B dispatched %d, "
	       "y %s)", (int)(intptr_t)bret, y_early ? "set before its fence ended" : "unset");

	/* Y's fence ends: its event is set by dispatch, as for any import. */
	kfdsync_timeline_inc(tl, 1);
	for (int i = 0; i < 100 && !y_set; i++) {
		if (readable(pfd, 100))
			kfdsync_ctx_dispatch(ctx);
		y_set = is_set(ey, 0);
	}
	tap_ok(y_set, "race_import_still_set_after_its_fence (%s)",
	       y_set ? "set" : "never set: dropped from the poll fd");
	kfdsync_timeline_free(tl);
	hsaKmtDestroyEvent(ex);
	hsaKmtDestroyEvent(ey);
}

#define RACE_THREADS	4
#define RACE_IMPORTS	200

static atomic_bool stop;

static void *dispatch_loop(void *arg)
{
	int pfd = kfdsync_ctx_get_poll_fd(ctx);

	(void)arg;
	while (!atomic_load(&stop))
		if (readable(pfd, 10))
			kfdsync_ctx_dispatch(ctx);
	return NULL;
}

/*
 * Imports in flight two at a time (each fd number closed by one dispatching
 * thread is soon another import's), ended in turn: each event is unset
 * while its fence pends and set once it ended.
 */
static void free_running_test(void)
{
	HsaEvent *ev[2] = { create_event(HSA_EVENTTYPE_SIGNAL, false),
			    create_event(HSA_EVENTTYPE_SIGNAL, false) };
	struct kfdsync_timeline *tl = NULL;
	pthread_t t[RACE_THREADS];
	int early = 0, missed = 0, failed = 0, fd;

	if (!ev[0] || !ev[1] || kfdsync_timeline_new(&tl))
		tap_bail("events or timeline");
	atomic_store(&stop, false);
	for (int i = 0; i < RACE_THREADS; i++)
		if (pthread_create(&t[i], NULL, dispatch_loop, NULL))
			tap_bail("pthread_create");
	/* Import i+1 is made before import i's fence ends. */
	fd = kfdsync_timeline_create_fence(tl, 1, NULL);
	failed += kfdsync_import_to_event(ctx, fd, ev[0]->EventId) != 0;
	close(fd);
	for (int i = 0; i < RACE_IMPORTS; i++) {
		HsaEvent *now = ev[i % 2], *next = ev[(i + 1) % 2];

		fd = kfdsync_timeline_create_fence(tl, (uint64_t)i + 2, NULL);
		failed += kfdsync_import_to_event(ctx, fd, next->EventId) != 0;
		close(fd);
		early += is_set(now, 0);
		kfdsync_timeline_inc(tl, 1);
		missed += !is_set(now, 10000);
	}
	kfdsync_timeline_inc(tl, 1);
	missed += !is_set(ev[RACE_IMPORTS % 2], 10000);
	atomic_store(&stop, true);
	for (int i = 0; i < RACE_THREADS; i++)
		pthread_join(t[i], NULL);
	tap_ok(!early && !missed && !failed,
	       "race_%d_threads_dispatch_%d_imports (%d set early, %d never, %d failed)",
	       RACE_THREADS, RACE_IMPORTS + 1, early, missed, failed);
	kfdsync_timeline_free(tl);
	hsaKmtDestroyEvent(ev[0]);
	hsaKmtDestroyEvent(ev[1]);
}

int main(void)
{
	struct kfdsync_module_info mi;

	scrub_hsa_env();
	require_sim_guest();
	tap_plan(4);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD");
	if (kfdsync_ctx_new_flags(&ctx, KFDSYNC_CTX_DISPATCH) ||
	    kfdsync_ctx_get_module_info(ctx, &mi))
		tap_bail("kfdsync context");
	if (!(mi.flags & KFDSYNC_INFO_RELAY_FORCED)) {
		tap_skip_rest(4, "hooks mode: imports set events in the kernel, nothing to dispatch");
	} else {
		stale_wakeup_test();
		free_running_test();
	}
	kfdsync_ctx_free(ctx);
	hsaKmtCloseKFD();
	return tap_exit();
}
