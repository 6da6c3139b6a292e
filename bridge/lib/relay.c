// SPDX-License-Identifier: MIT
/*
 * The export relay: in relay mode (KFDSYNC_SOURCE_RELAY, the module's hooks
 * are not attached) kfdsync.ko does not see amdkfd signal the caller's
 * events, so the library reports them (KFDSYNC_IOCTL_RELAY_SIGNALS): a few
 * threads of the library wait on the relayed events with amdkfd's own
 * AMDKFD_IOC_WAIT_EVENTS, on a /dev/kfd fd of the library's own (amdkfd has
 * one process per address space: any fd of the process reaches its events).
 *
 * What amdkfd tells a waiter decides the design (kfd_events.c,
 * kfd_wait_on_events()):
 *
 * - With event ages (KFD ioctl 1.14, Linux 6.5+): every set_event()
 *   increments the event's age, and a wait that passes the age it knows
 *   (last_event_age) returns at once if the age moved and copies the new age
 *   back for every event that was activated. The count of signals is then
 *   exact (the difference of two ages), whichever events of the wait fired,
 *   and a latched auto-reset signal the wait consumes always shows as an age
 *   that moved: a wait over many events consumes nothing it does not
 *   report. So in *age mode* one thread waits on up to RELAY_GROUP_MAX
 *   events at once, at most RELAY_MAX_GROUPS threads (4095 events: 4
 *   threads). Each thread also waits on a private auto-reset "kick" event
 *   (age 0: plain latch semantics) that the library sets to make it reload
 *   its events or stop. A group whose last event is removed stops: its
 *   thread is joined and its kick destroyed (the next event starts a new
 *   group), so a context with nothing relayed holds no thread.
 * - Without event ages (6.1): a wait-any says only that *some* event of the
 *   wait fired, while it consumes the latched auto-reset signal of *every*
 *   event it waits on. A wait over several relayed events would consume
 *   signals it cannot attribute, so in *binary mode* every relayed event has
 *   its own thread waiting on exactly two events: the relayed event and the
 *   thread's kick event. A stop flag is written before the kick is set, so a
 *   wake with the flag clear is the relayed event's signal: one report per
 *   wake-up, and two signals inside one wake-up count as one (amdkfd latches
 *   one bit).
 *
 * Never a timeout: on 6.1 amdkfd loses an auto-reset signal that lands just
 * as a timed wait expires (set_event() sees the waiter and does not latch;
 * the wait has already chosen TIMEOUT and free_waiters() restores the signal
 * only for -ERESTARTSYS). Every wait here is infinite; nothing polls, and an
 * idle relay never wakes. (Age mode's one-shot probes below use timeout 0:
 * with ages a signal in that window still moves the age, which the next wait
 * sees, so nothing is lost there.)
 *
 * Threads block every signal and are stopped by their kick and joined,
 * never cancelled. They are named "kfdsync-relay" (tests and tools/bench
 * find them in /proc/self/task by that name).
 *
 * That is the *threads form*. A context made with KFDSYNC_CTX_DISPATCH has
 * the *dispatch form* instead (relay_dispatch.c): no thread, the caller's
 * event loop asks amdkfd without waiting. Both share what is below the
 * threads' code here: the report to the module, the age probe, and what
 * happens when the relay loses an event (kfdsync_relay_lost()).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"
#include "relay.h"

/* The threads call only ioctl(2) (no libhsakmt); ASan's frames fit too. */
#define RELAY_STACK_SIZE	(128 * 1024)

/* One relayed event in a group. */
struct member {
	uint32_t event_id;	/* 0: free entry */
	uint64_t serial;	/* which registration, for stale results */
	uint64_t age;		/* amdkfd's age last reported (age mode) */
};

/* One entry of a thread's wait: which member it was built from. */
struct snap {
	uint32_t event_id;
	size_t idx;		/* in group.members */
	uint64_t serial;
	uint64_t sent;		/* the age the wait passed */
};

/*
 * struct group - one relay thread and the events it waits on
 *
 * @members, @n_members, @gen and @stop are protected by the context's
 * relays.lock; @armed too (with relays.armed_cond). The rest is the
 * thread's own.
 */
struct group {
	struct kfdsync_relays *rs;
	pthread_t thread;
	uint32_t kick;		/* private auto-reset event (kfd.c): reload or stop */
	struct member *members;
	size_t n_members;	/* used entries (age mode: up to RELAY_GROUP_MAX) */
	size_t cap;
	uint64_t gen;		/* bumped at every change of the members */
	uint64_t armed;		/* the gen the thread's current wait was built from */
	bool stop;
	bool dead;		/* age mode: its thread ended on a failure of /dev/kfd */
	atomic_bool stop_flag;	/* binary mode: written before the kick is set */
	/* the thread's snapshot of its wait */
	struct kfd_wait_event_data *wait;
	struct snap *snap;
	size_t n_wait;
	pid_t pid;		/* the process the thread runs in */
	struct group *next;	/* binary mode: in relays.binary */
};


/*
 * What a failed wait or probe of one event means: amdkfd does not know it
 * (EINVAL at the start of a wait, EIO when it was destroyed under one), or
 * the relay's /dev/kfd itself failed (anything else).
 */
static bool lost_event(int err)
{
	return err == -EINVAL || err == -EIO;
}

/* A report the module refused for a reason other than "nothing to relay". */
static void report_failed(struct kfdsync_relays *rs, int err)
{
	/* ENOENT: unregistered meanwhile; EBUSY: the hooks count it. */
	if (err < 0 && err != -ENOENT && err != -EBUSY)
		kfdsync_ctx_fail(rs->ctx, err);
}

/* Under relays.lock: is @sn still the registration its member holds? */
static struct member *snap_member(struct group *g, const struct snap *sn)
{
	if (sn->idx >= g->n_members || g->members[sn->idx].serial != sn->serial)
		return NULL;
	return &g->members[sn->idx];
}

/*
 * Age mode, after the thread's wait: report what moved, then record the
 * ages in the members that are still the registrations we waited for.
 */
static void group_report(struct group *g)
{
	struct kfdsync_relays *rs = g->rs;
	size_t i;

	for (i = 0; i < g->n_wait; i++) {
		uint64_t now = g->wait[i].last_event_age;
		struct snap *sn = &g->snap[i];

		if (now == sn->sent)
			continue;
		/*
		 * -ENOENT: unregistered meanwhile (kfdsync_relay_stop() waits
		 * for us to re-arm); -EBUSY: the hooks count it. Either way
		 * nothing to tell; the age is still ours to keep.
		 */
		report_failed(rs, kfdsync_relay_report(rs, sn->event_id, now - sn->sent));
		sn->sent = now;
	}
	pthread_mutex_lock(&rs->lock);
	for (i = 0; i < g->n_wait; i++) {
		struct member *m = snap_member(g, &g->snap[i]);

		if (m)
			m->age = g->snap[i].sent;
	}
	pthread_mutex_unlock(&rs->lock);
}

/*
 * Age mode, after a failed wait: amdkfd fails the whole wait when one event
 * is unknown (destroyed without being unregistered first). Probe each
 * member alone, report what moved, and drop the ones amdkfd does not know
 * (kfdsync_relay_lost(): their fences end at once, the application is
 * told). Returns 0, or the error of a probe that failed for another reason
 * (the relay's /dev/kfd is unusable).
 */
static int group_sort_out(struct group *g)
{
	struct kfdsync_relays *rs = g->rs;
	int fatal = 0;
	size_t i;

	for (i = 0; i < g->n_wait; i++) {
		struct snap *sn = &g->snap[i];
		struct member *m;
		uint64_t age = sn->sent;
		int ret = kfdsync_kfd_probe_age(rs->kfd_fd, sn->event_id, &age);

		if (ret < 0 && !lost_event(ret)) {
			fatal = ret;
			break;
		}
		if (ret == 0 && age != sn->sent)
			report_failed(rs, kfdsync_relay_report(rs, sn->event_id, age - sn->sent));
		pthread_mutex_lock(&rs->lock);
		m = snap_member(g, sn);
		if (m && ret < 0) {
			m->event_id = 0;
			m->serial = 0;
			g->gen++;
			kfdsync_relay_lost(rs, sn->event_id, -EIDRM);
		} else if (m) {
			m->age = age;
		}
		pthread_mutex_unlock(&rs->lock);
	}
	return fatal;
}

/*
 * The relay's /dev/kfd failed with @err: none of the group's events can be
 * relayed any more. Each is lost (its fences end now); the group is dead
 * (no thread waits for it) and takes no new event. Under relays.lock.
 */
static void group_fail(struct group *g, int err)
{
	size_t i;

	for (i = 0; i < g->n_members; i++) {
		if (!g->members[i].event_id)
			continue;
		kfdsync_relay_lost(g->rs, g->members[i].event_id, err);
		g->members[i].event_id = 0;
		g->members[i].serial = 0;
	}
	g->n_members = 0;
	g->gen++;
	g->dead = true;
}

/* Build the thread's wait from the members; under relays.lock. */
static void group_arm(struct group *g)
{
	size_t i, n = 0;

	for (i = 0; i < g->n_members; i++) {
		struct member *m = &g->members[i];

		if (!m->event_id)
			continue;
		memset(&g->wait[n], 0, sizeof(g->wait[n]));
		g->wait[n].event_id = m->event_id;
		g->wait[n].last_event_age = m->age;
		g->snap[n] = (struct snap){ .event_id = m->event_id, .idx = i,
					    .serial = m->serial, .sent = m->age };
		n++;
	}
	g->n_wait = n;
	/* Last, with age 0: latch semantics, consumed by this wait only. */
	memset(&g->wait[n], 0, sizeof(g->wait[n]));
	g->wait[n].event_id = g->kick;
	g->armed = g->gen;
	pthread_cond_broadcast(&g->rs->armed_cond);
}

static void *group_main_ages(void *arg)
{
	struct group *g = arg;
	struct kfdsync_relays *rs = g->rs;

	pthread_mutex_lock(&rs->lock);
	for (;;) {
		uint32_t result;
		int ret;

		if (g->stop)
			break;
		group_arm(g);
		pthread_mutex_unlock(&rs->lock);

		ret = kfdsync_kfd_wait(rs->kfd_fd, g->wait, (uint32_t)g->n_wait + 1,
				       KFD_TIMEOUT_INFINITE, &result);
		if (lost_event(ret))
			ret = group_sort_out(g);
		if (ret == -ENOMEM) {
			usleep(100000);	/* amdkfd's waiter array; try again */
		} else if (ret < 0) {
			/* /dev/kfd unusable: nothing to wait on. */
			pthread_mutex_lock(&rs->lock);
			group_fail(g, ret);
			break;
		} else if (result == KFD_WAIT_COMPLETE) {
			group_report(g);
		}
		pthread_mutex_lock(&rs->lock);
	}
	/* Nobody waits for a re-arm of a stopped group. */
	g->armed = UINT64_MAX;
	pthread_cond_broadcast(&rs->armed_cond);
	pthread_mutex_unlock(&rs->lock);
	return NULL;
}

static void *group_main_binary(void *arg)
{
	struct group *g = arg;
	struct kfdsync_relays *rs = g->rs;
	struct kfd_wait_event_data ev[2];
	uint32_t id = g->members[0].event_id;

	for (;;) {
		uint32_t result;
		int ret;

		memset(ev, 0, sizeof(ev));
		ev[0].event_id = id;
		ev[1].event_id = g->kick;
		ret = kfdsync_kfd_wait(rs->kfd_fd, ev, 2, KFD_TIMEOUT_INFINITE, &result);
		if (atomic_load(&g->stop_flag))
			break;
		if (ret == -ENOMEM) {
			usleep(100000);	/* amdkfd's waiter array; try again */
			continue;
		}
		/*
		 * An error (the event was destroyed, /dev/kfd went away) would
		 * come back at once on every retry: the event is lost (its
		 * fences end now, the application is told), the thread ends.
		 */
		if (ret < 0) {
			kfdsync_relay_lost(rs, id, lost_event(ret) ? -EIDRM : ret);
			/* kfdsync_relay_stop() of a new registration of @id is not ours. */
			pthread_mutex_lock(&rs->lock);
			g->members[0].event_id = 0;
			pthread_mutex_unlock(&rs->lock);
			break;
		}
		if (result != KFD_WAIT_COMPLETE)
			continue;
		/* ENOENT, EBUSY, EPERM: nothing left to relay. */
		ret = kfdsync_relay_report(rs, id, 1);
		if (ret < 0) {
			report_failed(rs, ret);
			break;
		}
	}
	return NULL;
}

/*
 * A group of @cap events and its thread; binary mode passes its one event
 * as @first_id (set before the thread starts). Under relays.lock.
 */
static int group_new(struct kfdsync_relays *rs, size_t cap, uint32_t first_id,
		     void *(*fn)(void *), struct group **out)
{
	sigset_t all, old;
	pthread_attr_t attr;
	struct group *g;
	int ret;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->rs = rs;
	g->cap = cap;
	g->pid = getpid();
	atomic_init(&g->stop_flag, false);
	g->members = calloc(cap, sizeof(*g->members));
	g->snap = calloc(cap, sizeof(*g->snap));
	g->wait = calloc(cap + 1, sizeof(*g->wait));
	ret = -ENOMEM;
	if (!g->members || !g->snap || !g->wait)
		goto err_free;
	/* Auto-reset, not signalled: only this library sets it. */
	ret = -ENOSPC;
	if (kfdsync_kfd_event_create(rs->kfd_fd, &g->kick))
		goto err_free;
	if (first_id) {
		g->members[0].event_id = first_id;
		g->members[0].serial = ++rs->serial;
		g->n_members = 1;
	}

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, RELAY_STACK_SIZE);
	/* The application's signal handlers never run on our threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&g->thread, &attr, fn, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret)
		goto err_event;
	pthread_setname_np(g->thread, "kfdsync-relay");
	*out = g;
	return 0;

err_event:
	kfdsync_kfd_event_destroy(rs->kfd_fd, g->kick);
err_free:
	free(g->wait);
	free(g->snap);
	free(g->members);
	free(g);
	return ret;
}

/* Stop and join a group's thread, free it; called without relays.lock. */
static void group_free(struct group *g)
{
	/*
	 * In a child of fork(2) the thread and the amdkfd events do not
	 * exist: joining would wait forever. Only free our copy.
	 */
	if (getpid() == g->pid) {
		pthread_mutex_lock(&g->rs->lock);
		g->stop = true;
		pthread_mutex_unlock(&g->rs->lock);
		atomic_store(&g->stop_flag, true);
		kfdsync_kfd_event_set(g->rs->kfd_fd, g->kick);
		pthread_join(g->thread, NULL);
		kfdsync_kfd_event_destroy(g->rs->kfd_fd, g->kick);
	}
	free(g->wait);
	free(g->snap);
	free(g->members);
	free(g);
}

/* The first relay of a context: our /dev/kfd and what amdkfd offers. */
/* Age mode: add @event_id to the least loaded group; under relays.lock. */
static int add_ages(struct kfdsync_relays *rs, uint32_t event_id, uint64_t age)
{
	struct group *g = NULL;
	struct member *m = NULL;
	bool fresh = false;
	size_t i;
	int ret;

	for (i = 0; i < rs->n_groups; i++)
		if (!rs->groups[i]->dead && (!g || rs->groups[i]->n_members < g->n_members))
			g = rs->groups[i];
	/* Count the free entries too: reuse one before growing a group. */
	if (g) {
		for (i = 0; i < g->n_members && !m; i++)
			if (!g->members[i].event_id)
				m = &g->members[i];
	}
	if (!m && (!g || g->n_members == RELAY_GROUP_MAX)) {
		if (rs->n_groups == RELAY_MAX_GROUPS)
			return -ENOSPC;
		ret = group_new(rs, RELAY_GROUP_MAX, 0, group_main_ages, &g);
		if (ret)
			return ret;
		rs->groups[rs->n_groups++] = g;
		fresh = true;
	}
	if (!m)
		m = &g->members[g->n_members++];
	m->event_id = event_id;
	m->serial = ++rs->serial;
	m->age = age;
	g->gen++;
	/*
	 * Asynchronous: ages are absolute, the thread loses nothing meanwhile.
	 * A new group's thread has not armed yet (it waits for relays.lock):
	 * its first wait has the event, no kick needed.
	 */
	if (!fresh)
		kfdsync_kfd_event_set(rs->kfd_fd, g->kick);
	return 0;
}

static int add_binary(struct kfdsync_relays *rs, uint32_t event_id)
{
	struct group *g;
	int ret;

	ret = group_new(rs, 1, event_id, group_main_binary, &g);
	if (ret)
		return ret;
	g->next = rs->binary;
	rs->binary = g;
	return 0;
}

int kfdsync_relay_start(struct kfdsync_relays *rs, uint32_t event_id)
{
	int ret = 0;

	pthread_mutex_lock(&rs->lock);
	if (!rs->enabled)
		goto out;
	ret = kfdsync_relays_open(rs);
	if (ret)
		goto out;
	/*
	 * The dispatch form cannot relay without event ages: a wait that does
	 * not block can lose a signal on such an amdkfd (see the top).
	 */
	ret = -EOPNOTSUPP;
	if (rs->dispatch && !rs->ages)
		goto out;
	if (rs->ages) {
		uint64_t age;

		/*
		 * The baseline: amdkfd's age now. A signal latched before the
		 * registration is not one kfdsync may count: the probe
		 * consumes it. Work submitted after kfdsync_event_add()
		 * returns (the documented pattern) signals after it.
		 */
		ret = kfdsync_kfd_probe_age(rs->kfd_fd, event_id, &age);
		if (ret == 0)
			ret = rs->dispatch ? kfdsync_dispatch_add(rs, event_id, age) :
					     add_ages(rs, event_id, age);
		if (ret == 0)
			atomic_fetch_add(&rs->ctx->relayed, 1);
	} else {
		struct kfd_wait_event_data ev = { .event_id = event_id };
		uint32_t result;

		/* The same for binary mode: consume a latched signal. */
		ret = kfdsync_kfd_wait(rs->kfd_fd, &ev, 1, 0, &result);
		if (ret == 0)
			ret = add_binary(rs, event_id);
		if (ret == 0)
			atomic_fetch_add(&rs->ctx->relayed, 1);
	}
out:
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

void kfdsync_relay_stop(struct kfdsync_relays *rs, uint32_t event_id)
{
	struct group **p, *gb = NULL;
	size_t i, j, k;

	pthread_mutex_lock(&rs->lock);
	if (rs->dispatch) {
		kfdsync_dispatch_remove(rs, event_id);
		pthread_mutex_unlock(&rs->lock);
		return;
	}
	for (p = &rs->binary; *p; p = &(*p)->next) {
		if ((*p)->members[0].event_id == event_id) {
			gb = *p;
			*p = gb->next;
			atomic_fetch_sub(&rs->ctx->relayed, 1);
			break;
		}
	}
	for (i = 0; !gb && i < rs->n_groups; i++) {
		struct group *g = rs->groups[i];

		for (j = 0; j < g->n_members; j++) {
			if (g->members[j].event_id != event_id)
				continue;
			g->members[j].event_id = 0;
			g->members[j].serial = 0;
			atomic_fetch_sub(&rs->ctx->relayed, 1);
			while (g->n_members && !g->members[g->n_members - 1].event_id)
				g->n_members--;
			g->gen++;
			if (!g->n_members) {
				/* The group's last event: its thread goes. */
				for (k = i + 1; k < rs->n_groups; k++)
					rs->groups[k - 1] = rs->groups[k];
				rs->groups[--rs->n_groups] = NULL;
				gb = g;
				break;
			}
			kfdsync_kfd_event_set(rs->kfd_fd, g->kick);
			/*
			 * Synchronous: once we return, the caller may destroy
			 * the event, and no wait of ours may hold it then.
			 */
			while (g->armed < g->gen)
				pthread_cond_wait(&rs->armed_cond, &rs->lock);
			break;
		}
	}
	pthread_mutex_unlock(&rs->lock);
	/* Joined outside the lock: other events' relays stay usable. */
	if (gb)
		group_free(gb);
}

void kfdsync_relays_free(struct kfdsync_relays *rs)
{
	struct group *g, *next;
	size_t i;

	if (!rs)
		return;
	for (g = rs->binary; g; g = next) {
		next = g->next;
		group_free(g);
	}
	for (i = 0; i < rs->n_groups; i++)
		group_free(rs->groups[i]);
	kfdsync_dispatch_free(rs);
	if (rs->kfd_fd >= 0)
		close(rs->kfd_fd);
	pthread_cond_destroy(&rs->armed_cond);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}
