// SPDX-License-Identifier: MIT
/*
 * stress_concurrency: many processes and threads use kfdsync at once for a
 * fixed time while owners and consumers are SIGKILLed at random, and a
 * checker that does not trust kfdsync judges every fence.
 *
 * How this program works. The parent is the hub and the checker; it never
 * opens /dev/kfd. It forks
 *
 * - owners (OWNERS): each opens /dev/kfd, the GPU simulator (two queues)
 *   and a kfdsync context, and keeps EVENTS signal events registered. Two
 *   GPU threads (one per queue) and a CPU thread pick random events and
 *   signal them: query the age A, then a simulated RELEASE_MEM of the
 *   GPU clock into the checker's shared memory right before the
 *   signalling RELEASE_MEM (or, on the CPU, the time right before
 *   hsaKmtSetEvent()), then export "the next signal after A" as a
 *   sync_file (sent to the hub over a UNIX socket, SCM_RIGHTS) or to an
 *   eventfd (waited on by the owner's own eventfd thread). The main
 *   thread retires events (unregister, destroy) and registers new ones.
 * - consumers (CONSUMERS, two threads each, own context and timelines):
 *   receive fences from the hub, poll them, merge them (with each other,
 *   with the same event's, with their own CPU timeline's fences), import
 *   them (atomic subtract into memory plus an eventfd), close some at
 *   once, and log how each fence ended (SYNC_IOC_FILE_INFO's status and
 *   timestamp) into shared memory.
 *
 * Every export is logged before it is made (event, seqno, deadline), so the
 * checker knows every fence that may exist. At the end it judges, from the
 * simulator's timestamps and its own records only:
 *
 * - never early: a fence that signalled at T for seqno A + 1 has at least
 *   A + 1 signals of its event (since registration) stamped at or before T
 *   (two writes amdkfd acknowledges together count as one, so ages may
 *   lag: that is allowed, leading is not);
 * - errors only where they may come from: -ETIMEDOUT not before the
 *   fence's deadline or that of a fence of the same event with a seqno at
 *   least as high; -ECANCELED not before the event was retired or its
 *   owner killed; -EIO only after its owner was killed;
 * - in order (I4): no fence ends after another of its event with a seqno
 *   at least as high, if it existed when that one ended;
 * - always ends: every fence within its deadline plus a slack (a merge
 *   with a timeline fence: the later of its event fence's deadline and its
 *   timeline fence's watchdog, which a timeline lagging behind on a slow
 *   kernel reaches first);
 * - exactly once: an eventfd export reads 1 and never fires again; an
 *   import subtracts once; merged fences end only after their parts; a
 *   timeline fence signals only at its value and ends with an error only
 *   once its watchdog (the timeline's fdinfo) has passed;
 * - at the end every counter is back to zero (kfdsync's user counts,
 *   debugfs, kfdsim's queues, FOLL_PIN pins).
 */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "sim_test.h"
#include "stress.h"

#define OWNERS		3
#define CONSUMERS	2
#define EVENTS		6		/* live events per owner */
#define MAX_RECS	2048		/* registrations over the run */
#define MAX_SIG		512		/* signals per registration */
#define MAX_EXPORTS	(1 << 17)
#define MAX_RESULTS	(1 << 17)
#define MAX_GENS	256		/* owner processes over the run */
#define SLACK_NS	(8 * S_NS)	/* a fence ends by deadline + this */
/*
 * Fences that end "with" another end in one pass under one lock, but the
 * guest's clock runs on while the host deschedules a vCPU: generous.
 */
#define PASS_NS		(1000 * MS_NS)
#define HELD		48		/* fences one consumer thread holds */
#define WORDS		4096		/* import targets of one consumer thread */

enum { EXP_INTENT = 1, EXP_OK, EXP_FAILED };
enum { KIND_SYNC = 1, KIND_EVENTFD };
enum { RES_ENDED = 1, RES_NEVER_ENDED, RES_EFD_VALUE, RES_EFD_TWICE, RES_IMPORT_BAD,
       RES_MERGE_EARLY, RES_TL_EARLY, RES_TL_ERROR_EARLY, RES_IMPORT_EARLY };

struct ev_rec {
	_Atomic uint32_t nsig;
	uint32_t id;
	uint32_t gen;
	uint32_t pad;
	int64_t reg_ns;
	_Atomic int64_t retire_ns;
	int64_t ts[MAX_SIG];		/* 0: not (yet) signalled */
};

struct gen {
	_Atomic int64_t kill_ns;
	int pid;
	int slot;
};

struct export_rec {
	_Atomic uint32_t state;
	uint32_t rec;
	uint32_t kind;
	int32_t err;
	uint64_t seqno;
	int64_t deadline;
	int64_t t_ret;
};

struct result {
	_Atomic uint32_t valid;
	uint32_t type;
	uint32_t export_idx;
	int32_t status;
	int64_t ts;
	int64_t value;
};

struct counters {
	_Atomic uint64_t registers, unregisters, gpu_signals, cpu_sets, exports_sync,
		exports_efd, export_fail_enospc, export_fail_other, forwarded, dropped,
		polls, merges, merges_late_part, tl_merges, imports, import_fail, closes_early, tl_incs,
		kills_owner, kills_consumer, results;
	_Atomic int64_t max_late_ns;
};

struct shm {
	_Atomic int stop;
	_Atomic uint32_t nrecs, nexports, nresults, ngens;
	struct counters c;
	struct gen gens[MAX_GENS];
	struct export_rec exports[MAX_EXPORTS];
	struct result results[MAX_RESULTS];
	struct ev_rec recs[MAX_RECS];
};

static struct shm *S;
static struct stress_opts opts;

/* The hub's message with every fence: which export it is. */
struct fence_msg {
	uint32_t export_idx;
	uint32_t pad;
	int64_t deadline;
};

static void add_result(uint32_t type, uint32_t export_idx, int32_t status, int64_t ts,
		       int64_t value)
{
	uint32_t i = atomic_fetch_add(&S->nresults, 1);
	struct result *r;

	if (i >= MAX_RESULTS)
		return;
	r = &S->results[i];
	r->type = type;
	r->export_idx = export_idx;
	r->status = status;
	r->ts = ts;
	r->value = value;
	atomic_store(&r->valid, 1);
	atomic_fetch_add(&S->c.results, 1);
}

/* ======================================================================
 * Owners
 * ====================================================================== */

struct oev {
	HsaEvent *ev;
	uint32_t rec;
	bool live;
	int users;		/* threads signalling or exporting it */
	int efds;		/* eventfd exports not ended yet */
	uint64_t last_pos[2];
};

struct owner {
	int slot, gen;
	int ctx, sim, hub;
	uint32_t q[2];
	pthread_mutex_t lock;
	struct oev ev[EVENTS];
	pthread_mutex_t efd_lock;
	struct efd_wait {
		int efd;
		uint32_t export_idx;
		int ev;
		int64_t deadline;
		int64_t spent_until;	/* fired: watched for a second firing until */
	} efd[256];
	int nefd;
	uint64_t seed;
};

static struct owner O;

static int new_rec(uint32_t id)
{
	uint32_t r = atomic_fetch_add(&S->nrecs, 1);

	if (r >= MAX_RECS)
		return -1;
	S->recs[r].id = id;
	S->recs[r].gen = O.gen;
	return (int)r;
}

/* Create and register event slot @k; false if out of records. */
static bool owner_event_new(int k)
{
	struct oev *e = &O.ev[k];
	int r, ret;

	e->ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!e->ev)
		_exit(20);
	r = new_rec(e->ev->EventId);
	if (r < 0) {
		hsaKmtDestroyEvent(e->ev);
		e->ev = NULL;
		return false;
	}
	ret = raw_register(O.ctx, e->ev->EventId, slot_addr(e->ev));
	if (ret) {
		tap_diag("owner %d: register %u: %s", O.slot, e->ev->EventId, strerror(-ret));
		_exit(21);
	}
	S->recs[r].reg_ns = now_ns();
	atomic_fetch_add(&S->c.registers, 1);
	e->rec = (uint32_t)r;
	e->users = 0;
	e->efds = 0;
	e->last_pos[0] = e->last_pos[1] = 0;
	e->live = true;
	return true;
}

/* Stop using event slot @k, wait for its work, unregister and destroy it. */
static void owner_event_retire(int k)
{
	struct oev *e = &O.ev[k];
	int64_t end = now_ns() + 30 * S_NS;
	int i;

	pthread_mutex_lock(&O.lock);
	e->live = false;
	while ((e->users || e->efds) && now_ns() < end) {
		pthread_mutex_unlock(&O.lock);
		sleep_ns(2 * MS_NS);
		pthread_mutex_lock(&O.lock);
	}
	pthread_mutex_unlock(&O.lock);
	if (!e->ev)
		return;
	for (i = 0; i < 2; i++)
		if (e->last_pos[i])
			kfdsim_queue_wait(O.sim, O.q[i], e->last_pos[i], 10000);
	/* The interrupt of the last packet is raised after its completion. */
	sleep_ns(20 * MS_NS);
	atomic_store(&S->recs[e->rec].retire_ns, now_ns());
	raw_unregister(O.ctx, e->ev->EventId);
	atomic_fetch_add(&S->c.unregisters, 1);
	hsaKmtDestroyEvent(e->ev);
	e->ev = NULL;
}

/* Pick a live event and hold it; -1 if none. */
static int owner_event_get(uint64_t *seed)
{
	int k, tries;

	pthread_mutex_lock(&O.lock);
	for (tries = 0; tries < EVENTS; tries++) {
		k = (int)rng_below(seed, EVENTS);
		if (O.ev[k].live && O.ev[k].ev) {
			O.ev[k].users++;
			pthread_mutex_unlock(&O.lock);
			return k;
		}
	}
	pthread_mutex_unlock(&O.lock);
	return -1;
}

static void owner_event_put(int k)
{
	pthread_mutex_lock(&O.lock);
	O.ev[k].users--;
	pthread_mutex_unlock(&O.lock);
}

/* Export (event @k, age @age) as a sync_file to the hub or to an eventfd. */
static void owner_export(int k, uint64_t age, uint64_t *seed)
{
	struct oev *e = &O.ev[k];
	uint32_t idx = atomic_fetch_add(&S->nexports, 1);
	struct export_rec *x;
	bool efd = rng_one_in(seed, 4);
	int64_t deadline = now_ns() + (300 + (int64_t)rng_below(seed, 2700)) * MS_NS;
	int ret, fd = -1;

	if (idx >= MAX_EXPORTS)
		return;
	x = &S->exports[idx];
	x->rec = e->rec;
	x->kind = efd ? KIND_EVENTFD : KIND_SYNC;
	x->seqno = age + 1;
	x->deadline = deadline;
	atomic_store(&x->state, EXP_INTENT);
	if (efd) {
		struct kfdsync_export a = {
			.event_id = e->ev->EventId, .age = age, .deadline_ns = (uint64_t)deadline,
		};

		fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fd < 0)
			_exit(22);
		a.fd = fd;
		pthread_mutex_lock(&O.efd_lock);
		if (O.nefd >= (int)(sizeof(O.efd) / sizeof(O.efd[0]))) {
			pthread_mutex_unlock(&O.efd_lock);
			close(fd);
			atomic_store(&x->state, EXP_FAILED);
			return;
		}
		ret = raw_ioctl(O.ctx, KFDSYNC_IOCTL_EXPORT_EVENTFD, &a);
		if (!ret) {
			x->t_ret = now_ns();
			atomic_store(&x->state, EXP_OK);
			O.efd[O.nefd++] = (struct efd_wait){ fd, idx, k, deadline, 0 };
			pthread_mutex_lock(&O.lock);
			e->efds++;
			pthread_mutex_unlock(&O.lock);
			atomic_fetch_add(&S->c.exports_efd, 1);
		}
		pthread_mutex_unlock(&O.efd_lock);
		if (ret)
			close(fd);
	} else {
		ret = raw_export(O.ctx, e->ev->EventId, age, (uint64_t)deadline);
		if (ret >= 0) {
			struct fence_msg m = { .export_idx = idx, .deadline = deadline };

			fd = ret;
			ret = 0;
			x->t_ret = now_ns();
			atomic_store(&x->state, EXP_OK);
			atomic_fetch_add(&S->c.exports_sync, 1);
			/* The hub gets a copy; ours is closed at once. */
			scm_send(O.hub, &m, sizeof(m), &fd, 1, 0);
			close(fd);
		}
	}
	if (ret) {
		x->err = ret;
		atomic_store(&x->state, EXP_FAILED);
		if (ret == -ENOSPC)
			atomic_fetch_add(&S->c.export_fail_enospc, 1);
		else
			atomic_fetch_add(&S->c.export_fail_other, 1);
	}
}

/* Take a signal number of record @r; -1 when it is full. */
static int sig_take(uint32_t r)
{
	uint32_t i = atomic_fetch_add(&S->recs[r].nsig, 1);

	return i < MAX_SIG ? (int)i : -1;
}

struct gpu_arg {
	int qi;
	uint64_t seed;
};

static void *owner_gpu_thread(void *arg)
{
	struct gpu_arg *g = arg;
	uint64_t recent[4] = { 0 };
	unsigned int n = 0;

	while (!atomic_load(&S->stop)) {
		uint32_t dw[32];
		struct pm4_buf b = PM4_BUF_INIT(dw);
		uint64_t age, end = 0;
		int k = owner_event_get(&g->seed), i, ret;
		struct oev *e;

		if (k < 0) {
			sleep_ns(MS_NS);
			continue;
		}
		e = &O.ev[k];
		i = sig_take(e->rec);
		if (i < 0) {
			owner_event_put(k);
			sleep_ns(MS_NS);
			continue;
		}
		age = raw_age(O.ctx, e->ev->EventId);
		/* Now and then long work: fences pend, some watchdogs fire. */
		pm4_sim_delay(&b, rng_one_in(&g->seed, 40) ?
			      (uint32_t)(100000 + rng_below(&g->seed, 2400000)) :
			      (uint32_t)rng_below(&g->seed, 1500));
		pm4_release_mem(&b, (uintptr_t)&S->recs[e->rec].ts[i], 0,
				PM4_RELEASE_MEM_DATA_GPU_CLOCK, PM4_RELEASE_MEM_INT_NONE, 0);
		pm4_release_mem_event(&b, slot_addr(e->ev), e->ev->EventId);
		ret = kfdsim_submit_buf(O.sim, O.q[g->qi], &b, &end);
		if (ret) {
			tap_diag("owner %d: submit: %s", O.slot, strerror(-ret));
			_exit(23);
		}
		atomic_fetch_add(&S->c.gpu_signals, 1);
		pthread_mutex_lock(&O.lock);
		e->last_pos[g->qi] = end;
		pthread_mutex_unlock(&O.lock);
		if (age != UINT64_MAX && !rng_one_in(&g->seed, 8))
			owner_export(k, age, &g->seed);
		owner_event_put(k);
		/* Keep at most a few packets in flight per queue. */
		if (recent[n % 4])
			kfdsim_queue_wait(O.sim, O.q[g->qi], recent[n % 4], 10000);
		recent[n++ % 4] = end;
	}
	return NULL;
}

static void *owner_cpu_thread(void *arg)
{
	uint64_t *seed = arg;

	while (!atomic_load(&S->stop)) {
		int k = owner_event_get(seed), i;
		struct oev *e;
		uint64_t age;

		if (k < 0) {
			sleep_ns(MS_NS);
			continue;
		}
		e = &O.ev[k];
		i = rng_one_in(seed, 3) ? -1 : sig_take(e->rec);
		if (i < 0) {
			/* Export only: the fence waits for someone's next signal. */
			age = raw_age(O.ctx, e->ev->EventId);
			if (age != UINT64_MAX)
				owner_export(k, age, seed);
		} else {
			age = raw_age(O.ctx, e->ev->EventId);
			S->recs[e->rec].ts[i] = now_ns();
			hsaKmtSetEvent(e->ev);
			atomic_fetch_add(&S->c.cpu_sets, 1);
			if (age != UINT64_MAX)
				owner_export(k, age, seed);
		}
		owner_event_put(k);
		sleep_ns((int64_t)rng_below(seed, 3000) * 1000);
	}
	return NULL;
}

/* Watch the eventfd exports: each fires once, reads 1, never again. */
static void *owner_efd_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[256];
		int n, i, k, stop = atomic_load(&S->stop);

		pthread_mutex_lock(&O.efd_lock);
		n = O.nefd;
		for (i = 0; i < n; i++)
			p[i] = (struct pollfd){ .fd = O.efd[i].efd, .events = POLLIN };
		pthread_mutex_unlock(&O.efd_lock);
		if (!n && stop)
			break;
		poll(p, n, 10);
		atomic_fetch_add(&S->c.polls, 1);
		pthread_mutex_lock(&O.efd_lock);
		for (i = 0; i < n; i++) {
			struct efd_wait *w = &O.efd[i];
			int64_t t = now_ns();
			bool done = false;

			if (p[i].revents & POLLIN) {
				uint64_t v = 0;

				if (read(w->efd, &v, sizeof(v)) != sizeof(v))
					v = 0;
				if (w->spent_until) {
					add_result(RES_EFD_TWICE, w->export_idx, 0, t, (int64_t)v);
					done = true;
				} else {
					add_result(v == 1 ? RES_ENDED : RES_EFD_VALUE, w->export_idx,
						   0, t, (int64_t)v);
					w->spent_until = t + 50 * MS_NS;
					pthread_mutex_lock(&O.lock);
					O.ev[w->ev].efds--;
					pthread_mutex_unlock(&O.lock);
				}
			} else if (w->spent_until && t > w->spent_until) {
				done = true;
			} else if (!w->spent_until && t > w->deadline + SLACK_NS) {
				add_result(RES_NEVER_ENDED, w->export_idx, 0, t, 0);
				pthread_mutex_lock(&O.lock);
				O.ev[w->ev].efds--;
				pthread_mutex_unlock(&O.lock);
				done = true;
			}
			if (done) {
				close(w->efd);
				w->efd = -1;
			}
		}
		/* Compact in order: entries past the snapshot stay as they are. */
		for (i = 0, k = 0; i < O.nefd; i++)
			if (O.efd[i].efd >= 0)
				O.efd[k++] = O.efd[i];
		O.nefd = k;
		pthread_mutex_unlock(&O.efd_lock);
	}
	return NULL;
}

static void owner_main(int slot, int gen, int hub)
{
	pthread_t gt[2], ct, et;
	struct gpu_arg ga[2];
	uint64_t cseed;
	int k, i, ret;

	O.slot = slot;
	O.gen = gen;
	O.hub = hub;
	O.seed = opts.seed ^ ((uint64_t)gen << 40);
	pthread_mutex_init(&O.lock, NULL);
	pthread_mutex_init(&O.efd_lock, NULL);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		_exit(10);
	O.sim = kfdsim_open();
	if (O.sim < 0)
		_exit(11);
	for (i = 0; i < 2; i++) {
		ret = kfdsim_queue_create(O.sim, 0, &O.q[i], NULL);
		if (ret)
			_exit(12);
	}
	O.ctx = raw_open(RAW_KFDSYNC_DEV);
	if (O.ctx < 0)
		_exit(13);
	for (k = 0; k < EVENTS; k++)
		owner_event_new(k);
	for (i = 0; i < 2; i++) {
		ga[i] = (struct gpu_arg){ i, rng_next(&O.seed) };
		pthread_create(&gt[i], NULL, owner_gpu_thread, &ga[i]);
	}
	cseed = rng_next(&O.seed);
	pthread_create(&ct, NULL, owner_cpu_thread, &cseed);
	pthread_create(&et, NULL, owner_efd_thread, NULL);

	while (!atomic_load(&S->stop)) {
		sleep_ns((300 + (int64_t)rng_below(&O.seed, 1200)) * MS_NS);
		if (atomic_load(&S->stop))
			break;
		k = (int)rng_below(&O.seed, EVENTS);
		owner_event_retire(k);
		owner_event_new(k);	/* out of records: the slot stays empty */
	}
	for (i = 0; i < 2; i++)
		pthread_join(gt[i], NULL);
	pthread_join(ct, NULL);
	pthread_join(et, NULL);
	for (k = 0; k < EVENTS; k++)
		owner_event_retire(k);
	close(O.ctx);
	for (i = 0; i < 2; i++)
		kfdsim_queue_destroy(O.sim, O.q[i]);
	close(O.sim);
	hsaKmtCloseKFD();
	_exit(0);
}

/* ======================================================================
 * Consumers
 * ====================================================================== */

enum { H_PLAIN = 1, H_IMPORT, H_MERGE, H_TLMERGE };

struct held {
	int type;
	int fd;			/* the fence (or the merged fence) */
	uint32_t export_idx;
	int64_t deadline;
	/* H_IMPORT */
	int efd;
	_Atomic int64_t *word;
	int64_t fence_ended;
	/* H_MERGE, H_TLMERGE: the parts (dups), the timeline value */
	int part[2];
	uint32_t tl_value;
	int64_t tl_made;	/* H_TLMERGE: just before its timeline fence was made */
};

struct consumer_thread {
	int ctx, sock, tl;
	uint32_t tl_next, tl_value;
	int64_t tl_watchdog_ns;	/* of @tl, from its fdinfo */
	uint64_t seed;
	struct held h[HELD];
	int n;
	/* Import targets: a word is reused only once its import is done. */
	_Atomic int64_t words[WORDS];
	bool word_busy[WORDS];
	unsigned int word_next;
};

static _Atomic int64_t *word_get(struct consumer_thread *c)
{
	unsigned int i;

	for (i = 0; i < WORDS; i++) {
		unsigned int k = (c->word_next + i) % WORDS;

		if (!c->word_busy[k]) {
			c->word_busy[k] = true;
			c->word_next = k + 1;
			return &c->words[k];
		}
	}
	return NULL;
}

static void word_put(struct consumer_thread *c, _Atomic int64_t *w)
{
	c->word_busy[w - c->words] = false;
}

static void held_drop(struct consumer_thread *c, int i)
{
	struct held *h = &c->h[i];

	close(h->fd);
	if (h->type == H_IMPORT && h->efd >= 0)
		close(h->efd);
	if (h->type == H_MERGE || h->type == H_TLMERGE) {
		if (h->part[0] >= 0)
			close(h->part[0]);
		if (h->part[1] >= 0)
			close(h->part[1]);
	}
	c->h[i] = c->h[--c->n];
}

/* The fence of @h ended: log it from its own sync_file info. */
static void log_fence(struct held *h)
{
	struct sync_fence_info fi[2];
	int n = fence_infos(h->fd, fi, 2, NULL);

	if (n == 1)
		add_result(RES_ENDED, h->export_idx, fi[0].status, (int64_t)fi[0].timestamp_ns, 0);
}

static bool fd_ready(int fd)
{
	return fd >= 0 && raw_wait(fd, 0);
}

/*
 * Whether a merged fence's parts have ended too, now that it has. Two
 * fences of one event have one context and one seqno (only age + 1 can be
 * pending): the merge kept one of them (it has one fence), and the other
 * ends in the same pass, with the same status, maybe a moment later.
 */
static bool merge_parts_ended(const struct held *h)
{
	struct sync_file_info info;
	bool one;
	int i;

	memset(&info, 0, sizeof(info));
	one = !ioctl(h->fd, SYNC_IOC_FILE_INFO, &info) && info.num_fences == 1;
	for (i = 0; i < 2; i++) {
		if (fd_ready(h->part[i]))
			continue;
		if (!one || !raw_wait(h->part[i], PASS_NS / MS_NS) ||
		    raw_fence_status(h->part[i]) != raw_fence_status(h->fd))
			return false;
		atomic_fetch_add(&S->c.merges_late_part, 1);
	}
	return true;
}

/* Receive a fence and decide what to do with it. */
static void consumer_take(struct consumer_thread *c)
{
	struct fence_msg m;
	unsigned int nfd;
	int fds[STRESS_MAX_FDS];
	ssize_t r = scm_recv(c->sock, &m, sizeof(m), fds, STRESS_MAX_FDS, &nfd, MSG_DONTWAIT);
	struct held *h;
	uint64_t what;

	if (r <= 0 || nfd != 1) {
		while (r > 0 && nfd--)
			close(fds[nfd]);
		return;
	}
	if (c->n >= HELD) {
		close(fds[0]);
		return;
	}
	what = rng_below(&c->seed, 10);
	if (what == 0) {			/* close at once */
		close(fds[0]);
		atomic_fetch_add(&S->c.closes_early, 1);
		return;
	}
	h = &c->h[c->n];
	memset(h, 0, sizeof(*h));
	h->fd = fds[0];
	h->export_idx = m.export_idx;
	h->deadline = m.deadline;
	h->efd = -1;
	h->part[0] = h->part[1] = -1;
	h->type = H_PLAIN;
	c->n++;

	if (what <= 2) {			/* import: subtract 1 from 100, eventfd */
		struct kfdsync_import a = {
			.fd = h->fd,
			.flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_SUB | KFDSYNC_IMPORT_EVENTFD,
			.value = 1, .error_value = 1,
		};
		int ret;

		h->word = word_get(c);
		if (!h->word)
			return;
		atomic_store(h->word, 100);
		h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		a.addr = (uintptr_t)h->word;
		a.eventfd = h->efd;
		ret = raw_ioctl(c->ctx, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &a);
		if (ret) {
			atomic_fetch_add(&S->c.import_fail, 1);
			close(h->efd);
			h->efd = -1;
			word_put(c, h->word);
			h->word = NULL;
		} else {
			h->type = H_IMPORT;
			atomic_fetch_add(&S->c.imports, 1);
		}
	} else if (what <= 4 && c->n >= 2) {	/* merge with another held fence */
		struct held *o = &c->h[rng_below(&c->seed, c->n - 1)];
		int mf;

		if (o == h || o->type != H_PLAIN)
			return;
		mf = raw_merge(h->fd, o->fd);
		if (mf < 0 || c->n >= HELD)  {
			if (mf >= 0)
				close(mf);
			return;
		}
		h = &c->h[c->n++];
		memset(h, 0, sizeof(*h));
		h->type = H_MERGE;
		h->fd = mf;
		h->efd = -1;
		h->export_idx = UINT32_MAX;
		h->deadline = c->h[c->n - 2].deadline > o->deadline ? c->h[c->n - 2].deadline :
			      o->deadline;
		h->part[0] = dup(c->h[c->n - 2].fd);
		h->part[1] = dup(o->fd);
		atomic_fetch_add(&S->c.merges, 1);
	} else if (what == 5 && c->n < HELD) {	/* merge with a timeline fence */
		uint32_t v = ++c->tl_next;
		int64_t made = now_ns();
		int tf = raw_tl_fence(c->tl, v), mf;

		if (tf < 0)
			return;
		mf = raw_merge(h->fd, tf);
		if (mf < 0) {
			close(tf);
			return;
		}
		h = &c->h[c->n++];
		memset(h, 0, sizeof(*h));
		h->type = H_TLMERGE;
		h->fd = mf;
		h->efd = -1;
		h->export_idx = UINT32_MAX;
		/*
		 * The merge ends when both parts have: the timeline fence by
		 * value @v or by its own watchdog, whichever comes first.
		 */
		h->tl_made = made;
		h->deadline = c->h[c->n - 2].deadline;
		if (h->deadline < made + c->tl_watchdog_ns)
			h->deadline = made + c->tl_watchdog_ns;
		h->part[0] = dup(c->h[c->n - 2].fd);
		h->part[1] = tf;
		h->tl_value = v;
		atomic_fetch_add(&S->c.tl_merges, 1);
	}
}

/* The watchdog of timeline @tl (its fdinfo's kfdsync-watchdog-ms), or -1. */
static int64_t tl_watchdog_ns(int tl)
{
	char path[64], line[128];
	long long ms = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", tl);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "kfdsync-watchdog-ms: %lld", &ms) == 1)
			break;
	fclose(f);
	return ms < 0 ? -1 : ms * MS_NS;
}

/* Look at every held fence; returns how many are left. */
static int consumer_poll(struct consumer_thread *c, int ms)
{
	struct pollfd p[HELD];
	int i;

	for (i = 0; i < c->n; i++)
		p[i] = (struct pollfd){ .fd = c->h[i].fd, .events = POLLIN };
	if (c->n)
		poll(p, c->n, ms);
	else
		sleep_ns(ms * MS_NS);
	atomic_fetch_add(&S->c.polls, 1);
	for (i = c->n - 1; i >= 0; i--) {
		struct held *h = &c->h[i];
		int64_t t = now_ns();
		bool ready = p[i].revents & POLLIN;
		int tl_status;

		if (h->type == H_IMPORT && !ready && fd_ready(h->efd)) {
			/* The import acts after its fence ended: it must be now. */
			if (!fd_ready(h->fd)) {
				add_result(RES_IMPORT_EARLY, h->export_idx, 0, t, 0);
				held_drop(c, i);
				continue;
			}
			ready = true;
		}
		if (!ready) {
			if (t > h->deadline + SLACK_NS) {
				add_result(RES_NEVER_ENDED, h->export_idx, 0, t, h->type);
				held_drop(c, i);
			}
			continue;
		}
		switch (h->type) {
		case H_PLAIN:
			log_fence(h);
			held_drop(c, i);
			break;
		case H_IMPORT:
			if (!h->fence_ended) {
				log_fence(h);
				h->fence_ended = t;
			}
			if (fd_ready(h->efd)) {
				uint64_t v = 0;
				int64_t w;

				if (read(h->efd, &v, sizeof(v)) != sizeof(v))
					v = 0;
				sleep_ns(MS_NS);	/* room for a wrong second action */
				w = atomic_load(h->word);
				if (v != 1 || w != 99 || fd_ready(h->efd))
					add_result(RES_IMPORT_BAD, h->export_idx, 0, t,
						   (int64_t)v << 32 | (uint32_t)w);
				word_put(c, h->word);	/* done: the word is free again */
				held_drop(c, i);
			} else if (t > h->fence_ended + SLACK_NS) {
				add_result(RES_IMPORT_BAD, h->export_idx, 0, t, -1);
				held_drop(c, i);
			}
			break;
		case H_MERGE:
			if (!merge_parts_ended(h))
				add_result(RES_MERGE_EARLY, UINT32_MAX, 0, t, 0);
			held_drop(c, i);
			break;
		case H_TLMERGE:
			if (!fd_ready(h->part[0]) || !fd_ready(h->part[1])) {
				add_result(RES_MERGE_EARLY, UINT32_MAX, 0, t, 1);
				held_drop(c, i);
				break;
			}
			/* The timeline fence has ended: how, read once. */
			tl_status = raw_fence_status(h->part[1]);
			if (tl_status == 1 && c->tl_value < h->tl_value)
				add_result(RES_TL_EARLY, UINT32_MAX, 0, t, h->tl_value);
			else if (tl_status < 0 && t < h->tl_made + c->tl_watchdog_ns)
				add_result(RES_TL_ERROR_EARLY, UINT32_MAX, 0, t, h->tl_value);
			held_drop(c, i);
			break;
		}
	}
	return c->n;
}

static void *consumer_thread_run(void *arg)
{
	struct consumer_thread *c = arg;
	int64_t drain_end = 0;

	c->tl = raw_open(KFDSYNC_TL_DEVICE);
	if (c->tl < 0)
		_exit(31);
	c->tl_watchdog_ns = tl_watchdog_ns(c->tl);
	if (c->tl_watchdog_ns <= 0)
		_exit(32);
	for (;;) {
		if (!atomic_load(&S->stop)) {
			consumer_take(c);
		} else if (!drain_end) {
			drain_end = now_ns() + 4 * SLACK_NS;
		}
		/* Advance the timeline now and then (its fences also expire). */
		if (c->tl_value < c->tl_next && rng_one_in(&c->seed, 6)) {
			raw_tl_inc(c->tl, 1);
			c->tl_value++;
			atomic_fetch_add(&S->c.tl_incs, 1);
		}
		if (drain_end) {
			if (c->tl_value < c->tl_next) {
				raw_tl_inc(c->tl, c->tl_next - c->tl_value);
				c->tl_value = c->tl_next;
			}
			if (!consumer_poll(c, 20) || now_ns() > drain_end)
				break;
		} else {
			consumer_poll(c, 2);
		}
	}
	while (c->n)
		held_drop(c, c->n - 1);
	close(c->tl);
	return NULL;
}

static void consumer_main(int sock, uint64_t seed)
{
	static struct consumer_thread ct[2];
	pthread_t t[2];
	int ctx = raw_open(RAW_KFDSYNC_DEV), i;

	if (ctx < 0)
		_exit(30);
	for (i = 0; i < 2; i++) {
		memset(&ct[i], 0, sizeof(ct[i]));
		ct[i].ctx = ctx;
		ct[i].sock = sock;
		ct[i].seed = seed + (uint64_t)i * 7919;
		pthread_create(&t[i], NULL, consumer_thread_run, &ct[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	close(ctx);
	_exit(0);
}

/* ======================================================================
 * The hub and checker (parent)
 * ====================================================================== */

struct child {
	pid_t pid;
	int sock;	/* owners: we receive; consumers: we send */
	int gen;	/* owners */
};

static struct child owners[OWNERS], consumers[CONSUMERS];
static unsigned int child_failures;

static void spawn_owner(int slot)
{
	uint32_t gen = atomic_fetch_add(&S->ngens, 1);
	int sv[2];
	pid_t pid;

	if (gen >= MAX_GENS)
		tap_bail("too many owner generations");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		close(sv[0]);
		owner_main(slot, (int)gen, sv[1]);
	}
	close(sv[1]);
	S->gens[gen].pid = pid;
	S->gens[gen].slot = slot;
	owners[slot] = (struct child){ pid, sv[0], (int)gen };
}

static void spawn_consumer(int slot, uint64_t seed)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		close(sv[0]);
		consumer_main(sv[1], seed);
	}
	close(sv[1]);
	consumers[slot] = (struct child){ pid, sv[0], -1 };
}

static void reap_expected(struct child *c, bool killed)
{
	int status;

	if (c->pid <= 0)
		return;
	if (waitpid(c->pid, &status, 0) == c->pid) {
		bool ok = killed ? (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
				   (WIFEXITED(status) && !WEXITSTATUS(status)) :
				   WIFEXITED(status) && !WEXITSTATUS(status);

		if (!ok) {
			tap_diag("child %d ended with status %#x", c->pid, status);
			child_failures++;
		}
	}
	close(c->sock);
	c->pid = 0;
}

/* Forward fences from owners to random consumers until @until. */
static void hub_run(int64_t until, uint64_t *seed, bool kills)
{
	int64_t next_kill = now_ns() + (1500 + (int64_t)rng_below(seed, 1500)) * MS_NS;

	while (now_ns() < until) {
		struct pollfd p[OWNERS];
		int i;

		for (i = 0; i < OWNERS; i++)
			p[i] = (struct pollfd){ .fd = owners[i].pid ? owners[i].sock : -1,
						.events = POLLIN };
		poll(p, OWNERS, 20);
		for (i = 0; i < OWNERS; i++) {
			struct fence_msg m;
			int fds[STRESS_MAX_FDS];
			unsigned int n;
			ssize_t r;

			if (!(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			r = scm_recv(owners[i].sock, &m, sizeof(m), fds, STRESS_MAX_FDS, &n,
				     MSG_DONTWAIT);
			if (r <= 0)
				continue;
			if (n == 1 && !atomic_load(&S->stop)) {
				struct child *c = &consumers[rng_below(seed, CONSUMERS)];

				if (c->pid && !scm_send(c->sock, &m, sizeof(m), fds, 1, MSG_DONTWAIT))
					atomic_fetch_add(&S->c.forwarded, 1);
				else
					atomic_fetch_add(&S->c.dropped, 1);
			}
			while (n--)
				close(fds[n]);
		}
		if (kills && now_ns() >= next_kill) {
			bool owner = rng_one_in(seed, 2);
			int slot = (int)rng_below(seed, owner ? OWNERS : CONSUMERS);
			struct child *c = owner ? &owners[slot] : &consumers[slot];

			if (owner)
				atomic_store(&S->gens[c->gen].kill_ns, now_ns());
			kill(c->pid, SIGKILL);
			reap_expected(c, true);
			if (owner) {
				atomic_fetch_add(&S->c.kills_owner, 1);
				spawn_owner(slot);
			} else {
				atomic_fetch_add(&S->c.kills_consumer, 1);
				spawn_consumer(slot, rng_next(seed));
			}
			next_kill = now_ns() + (1500 + (int64_t)rng_below(seed, 1500)) * MS_NS;
		}
	}
}

/* After stop: keep draining the owners' sockets until every child exited. */
static void reap_all(uint64_t *seed)
{
	int64_t end = now_ns() + 90 * S_NS;
	bool left = true;
	int i;

	while (left) {
		hub_run(now_ns() + 100 * MS_NS, seed, false);
		left = false;
		for (i = 0; i < OWNERS + CONSUMERS; i++) {
			struct child *c = i < OWNERS ? &owners[i] : &consumers[i - OWNERS];
			int status;

			if (!c->pid)
				continue;
			if (now_ns() > end) {
				tap_diag("child %d did not finish: killed", c->pid);
				kill(c->pid, SIGKILL);
				child_failures++;
			}
			if (waitpid(c->pid, &status, now_ns() > end ? 0 : WNOHANG) == c->pid) {
				if (!WIFEXITED(status) || WEXITSTATUS(status)) {
					tap_diag("child %d ended with status %#x", c->pid, status);
					child_failures++;
				}
				close(c->sock);
				c->pid = 0;
			} else {
				left = true;
			}
		}
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Signals of record @r stamped at or before @t (its ts[] sorted). */
static uint64_t signals_by(const struct ev_rec *r, const int64_t *sorted, unsigned int n,
			   int64_t t)
{
	unsigned int lo = 0, hi = n;

	(void)r;
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (sorted[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct verdict {
	uint64_t judged, signalled, timedout, canceled, eio, efd_ended, early, bad_error,
		 late, never, efd_value, efd_twice, import_bad, import_early, merge_early,
		 tl_early, order, order_pass;
	int64_t max_late;
};

static void violation(struct verdict *v, uint64_t *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void violation(struct verdict *v, uint64_t *counter, const char *fmt, ...)
{
	va_list ap;

	(void)v;
	if (++*counter > 5)	/* the first five of each kind */
		return;
	fputs("# VIOLATION: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/* For every record: sorted signal stamps; per export the earliest deadline at >= seqno. */
static int64_t **sorted_ts;
static unsigned int *sorted_n;
static int64_t *min_deadline_at_or_above;	/* per export */

static int cmp_export_seqno_desc(const void *a, const void *b)
{
	const struct export_rec *x = &S->exports[*(const uint32_t *)a];
	const struct export_rec *y = &S->exports[*(const uint32_t *)b];

	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	return x->seqno > y->seqno ? -1 : x->seqno < y->seqno;
}

static void prepare_checker(void)
{
	uint32_t nrecs = atomic_load(&S->nrecs), nexp = atomic_load(&S->nexports), r, i, j;
	uint32_t *order;
	int64_t cur;

	if (nrecs > MAX_RECS)
		nrecs = MAX_RECS;
	if (nexp > MAX_EXPORTS)
		nexp = MAX_EXPORTS;
	sorted_ts = calloc(nrecs + 1, sizeof(*sorted_ts));
	sorted_n = calloc(nrecs + 1, sizeof(*sorted_n));
	for (r = 0; r < nrecs; r++) {
		unsigned int n = 0;

		sorted_ts[r] = malloc(sizeof(int64_t) * MAX_SIG);
		for (i = 0; i < MAX_SIG; i++)
			if (S->recs[r].ts[i])
				sorted_ts[r][n++] = S->recs[r].ts[i];
		qsort(sorted_ts[r], n, sizeof(int64_t), cmp_i64);
		sorted_n[r] = n;
	}
	/* Exports by (record, seqno descending): running minimum of deadlines. */
	order = malloc(sizeof(*order) * (nexp + 1));
	min_deadline_at_or_above = malloc(sizeof(int64_t) * (nexp + 1));
	for (i = 0; i < nexp; i++)
		order[i] = i;
	qsort(order, nexp, sizeof(*order), cmp_export_seqno_desc);
	for (i = 0; i < nexp; i = j) {
		uint32_t rec = S->exports[order[i]].rec;

		cur = INT64_MAX;
		for (j = i; j < nexp && S->exports[order[j]].rec == rec;) {
			uint64_t s = S->exports[order[j]].seqno;
			uint32_t k;

			/* Same seqno: one group, the minimum over it and above. */
			for (k = j; k < nexp && S->exports[order[k]].rec == rec &&
				    S->exports[order[k]].seqno == s; k++) {
				const struct export_rec *x = &S->exports[order[k]];

				if (atomic_load(&x->state) != EXP_FAILED && x->deadline < cur)
					cur = x->deadline;
			}
			for (; j < k; j++)
				min_deadline_at_or_above[order[j]] = cur;
		}
	}
	free(order);
}

struct ended {
	int32_t status;
	uint32_t idx;
	uint32_t rec;
	uint64_t seqno;
	int64_t t_end, t_ret;
};

static int cmp_ended(const void *a, const void *b)
{
	const struct ended *x = a, *y = b;

	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	return x->seqno > y->seqno ? -1 : x->seqno < y->seqno;
}

static void judge(struct verdict *v)
{
	uint32_t nres = atomic_load(&S->nresults), nexp = atomic_load(&S->nexports), i, j, k;
	struct ended *ends;
	unsigned int nends = 0;

	if (nres > MAX_RESULTS)
		nres = MAX_RESULTS;
	if (nexp > MAX_EXPORTS)
		nexp = MAX_EXPORTS;
	memset(v, 0, sizeof(*v));
	prepare_checker();
	ends = calloc(nres + 1, sizeof(*ends));

	for (i = 0; i < nres; i++) {
		const struct result *res = &S->results[i];
		const struct export_rec *x;
		const struct ev_rec *r;
		int64_t kill, retire, t = res->ts;

		if (!atomic_load(&res->valid))
			continue;
		switch (res->type) {
		case RES_NEVER_ENDED:
			violation(v, &v->never, "export %u never ended (held type %" PRId64 ")",
				  res->export_idx, res->value);
			continue;
		case RES_EFD_VALUE:
			violation(v, &v->efd_value, "eventfd export %u read %" PRId64,
				  res->export_idx, res->value);
			continue;
		case RES_EFD_TWICE:
			violation(v, &v->efd_twice, "eventfd export %u fired twice",
				  res->export_idx);
			continue;
		case RES_IMPORT_BAD:
			violation(v, &v->import_bad, "import of export %u: eventfd/word %#" PRIx64,
				  res->export_idx, (uint64_t)res->value);
			continue;
		case RES_IMPORT_EARLY:
			violation(v, &v->import_early, "import of export %u acted before its fence ended",
				  res->export_idx);
			continue;
		case RES_MERGE_EARLY:
			violation(v, &v->merge_early, "a merged fence ended before its part");
			continue;
		case RES_TL_EARLY:
			violation(v, &v->tl_early, "timeline fence %" PRId64 " signalled early",
				  res->value);
			continue;
		case RES_TL_ERROR_EARLY:
			violation(v, &v->tl_early,
				  "timeline fence %" PRId64 " ended with an error before its watchdog",
				  res->value);
			continue;
		}
		if (res->export_idx >= nexp)
			continue;
		x = &S->exports[res->export_idx];
		if (x->rec >= MAX_RECS)
			continue;
		r = &S->recs[x->rec];
		kill = atomic_load(&S->gens[r->gen].kill_ns);
		retire = atomic_load(&r->retire_ns);
		v->judged++;

		if (x->kind == KIND_EVENTFD) {
			/*
			 * Woken at @t (an upper bound of when it ended). Before
			 * any deadline that could end it, it signalled: then
			 * A + 1 signals must be stamped by @t.
			 */
			v->efd_ended++;
			if (t < min_deadline_at_or_above[res->export_idx] &&
			    signals_by(r, sorted_ts[x->rec], sorted_n[x->rec], t) < x->seqno)
				violation(v, &v->early, "eventfd export %u (event %u seqno %" PRIu64
					  ") woke at %" PRId64 " with %" PRIu64 " signals stamped",
					  res->export_idx, r->id, x->seqno, t,
					  signals_by(r, sorted_ts[x->rec], sorted_n[x->rec], t));
			continue;
		}
		if (t - x->deadline > v->max_late)
			v->max_late = t - x->deadline;
		if (t > x->deadline + SLACK_NS)
			violation(v, &v->late, "export %u ended %.3f s after its deadline",
				  res->export_idx, (double)(t - x->deadline) / S_NS);
		if (res->status == 1) {
			uint64_t n = signals_by(r, sorted_ts[x->rec], sorted_n[x->rec], t);

			v->signalled++;
			if (n < x->seqno || t < r->reg_ns)
				violation(v, &v->early, "EARLY: export %u (event %u, seqno %" PRIu64
					  ") signalled at %" PRId64 " with %" PRIu64
					  " signals stamped by then", res->export_idx, r->id,
					  x->seqno, t, n);
		} else if (res->status == -ETIMEDOUT) {
			v->timedout++;
			if (t < min_deadline_at_or_above[res->export_idx])
				violation(v, &v->bad_error, "export %u: -ETIMEDOUT %.3f ms before any deadline",
					  res->export_idx,
					  (double)(min_deadline_at_or_above[res->export_idx] - t) / MS_NS);
		} else if (res->status == -ECANCELED) {
			v->canceled++;
			if (!((retire && t >= retire) || (kill && t >= kill)))
				violation(v, &v->bad_error, "export %u: -ECANCELED with its event live",
					  res->export_idx);
		} else if (res->status == -EIO) {
			v->eio++;
			if (!(kill && t >= kill))
				violation(v, &v->bad_error, "export %u: -EIO, owner not killed",
					  res->export_idx);
		} else {
			violation(v, &v->bad_error, "export %u ended with %d", res->export_idx,
				  res->status);
		}
		ends[nends++] = (struct ended){ res->status, res->export_idx, x->rec, x->seqno, t,
						atomic_load(&x->state) == EXP_OK ? x->t_ret :
						INT64_MAX };
	}

	/*
	 * I4: sort by (record, seqno descending); a fence must not end after
	 * one of a seqno at least as high if it existed when that one ended.
	 */
	qsort(ends, nends, sizeof(*ends), cmp_ended);
	for (i = 0; i < nends; i = j) {
		/* The earliest end among higher seqnos, and that fence. */
		int64_t min_above = INT64_MAX;
		const struct ended *above = NULL;

		for (j = i; j < nends && ends[j].rec == ends[i].rec;) {
			int64_t g1 = INT64_MAX, g2 = INT64_MAX;	/* two earliest in group */
			const struct ended *first_g = NULL;
			int g2_status = 0;

			for (k = j; k < nends && ends[k].rec == ends[j].rec &&
				    ends[k].seqno == ends[j].seqno; k++) {
				if (ends[k].t_end < g1) {
					g2 = g1;
					g2_status = first_g ? first_g->status : 0;
					g1 = ends[k].t_end;
					first_g = &ends[k];
				} else if (ends[k].t_end < g2) {
					g2 = ends[k].t_end;
					g2_status = ends[k].status;
				}
			}
			for (; j < k; j++) {
				const struct ended *f = &ends[j];
				int64_t same = f->t_end == g1 ? g2 : g1;

				/*
				 * Pending when a higher seqno ended: never for a
				 * signal or a watchdog (both end seqnos in
				 * ascending order); an error ending the whole
				 * context may take them in any order in one pass.
				 */
				if (above && f->t_end > min_above && f->t_ret < min_above) {
					bool pass = f->status == above->status && f->status < 0 &&
						    f->t_end - min_above <= PASS_NS;

					if (pass && ++v->order_pass <= 3)
						tap_diag("one error pass, not in seqno order: export %u "
							 "(seqno %" PRIu64 ", %d) ended %.3f us after "
							 "export %u (seqno %" PRIu64 ")", f->idx, f->seqno,
							 f->status, (double)(f->t_end - min_above) / 1000,
							 above->idx, above->seqno);
					else if (!pass)
						violation(v, &v->order, "ORDER: export %u (event record %u, seqno %"
							  PRIu64 ", status %d) ended %.3f ms after export %u "
							  "(seqno %" PRIu64 ", status %d)", f->idx, f->rec,
							  f->seqno, f->status,
							  (double)(f->t_end - min_above) / MS_NS,
							  above->idx, above->seqno, above->status);
				}
				/* Of one seqno: in one pass, with one status. */
				if (same != INT64_MAX && f->t_end > same && f->t_ret < same &&
				    (f->t_end - same > PASS_NS ||
				     f->status != (f->t_end == g1 ? g2_status : first_g->status)))
					violation(v, &v->order, "ORDER: export %u (event record %u, seqno %"
						  PRIu64 ", status %d) ended %.3f ms after one of its seqno",
						  f->idx, f->rec, f->seqno, f->status,
						  (double)(f->t_end - same) / MS_NS);
			}
			if (g1 < min_above) {
				min_above = g1;
				above = first_g;
			}
		}
	}
	free(ends);
}

int main(int argc, char **argv)
{
	struct verdict v;
	uint64_t seed, total;
	int64_t until;
	int i;

	scrub_hsa_env();
	stress_parse(argc, argv, "stress_concurrency", 40, 0, &opts);
	require_sim_guest();
	require_sim_interrupts();	/* its GPU work is the simulator's */
	if (access(RAW_KFDSYNC_DEV, F_OK)) {
		printf("1..0 # SKIP no %s (kfdsync not loaded)\n", RAW_KFDSYNC_DEV);
		return 0;
	}
	seed = opts.seed;
	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	stress_check_zero("counters_zero_before_run", 0, 0, 2000);

	for (i = 0; i < OWNERS; i++)
		spawn_owner(i);
	for (i = 0; i < CONSUMERS; i++)
		spawn_consumer(i, rng_next(&seed));
	until = now_ns() + (int64_t)(opts.seconds * S_NS);
	hub_run(until, &seed, true);

	/* Stop: owners drain their work and eventfds, consumers their fences. */
	atomic_store(&S->stop, 1);
	reap_all(&seed);

	tap_diag("operations: %" PRIu64 " registers, %" PRIu64 " unregisters, %" PRIu64
		 " GPU signals, %" PRIu64 " CPU sets, %" PRIu64 " sync_file exports, %" PRIu64
		 " eventfd exports (%" PRIu64 " ENOSPC, %" PRIu64 " other failures)",
		 S->c.registers, S->c.unregisters, S->c.gpu_signals, S->c.cpu_sets,
		 S->c.exports_sync, S->c.exports_efd, S->c.export_fail_enospc,
		 S->c.export_fail_other);
	tap_diag("operations: %" PRIu64 " forwarded (%" PRIu64 " dropped), %" PRIu64
		 " merges (%" PRIu64 " of one event's fences whose other part ended a moment"
		 " after), %" PRIu64 " timeline merges, %" PRIu64 " timeline increments, %"
		 PRIu64 " imports (%" PRIu64 " refused), %" PRIu64 " closed unwaited, %" PRIu64
		 " polls", S->c.forwarded, S->c.dropped, S->c.merges, S->c.merges_late_part,
		 S->c.tl_merges,
		 S->c.tl_incs, S->c.imports, S->c.import_fail, S->c.closes_early, S->c.polls);
	tap_diag("kills: %" PRIu64 " owners, %" PRIu64 " consumers", S->c.kills_owner,
		 S->c.kills_consumer);
	tap_ok(!child_failures, "children_exit_cleanly (%u failed)", child_failures);
	tap_ok(S->c.export_fail_other == 0, "exports_fail_only_enospc (%" PRIu64 " others)",
	       S->c.export_fail_other);
	tap_ok(S->c.gpu_signals > 100 && S->c.exports_sync > 100 && S->c.kills_owner +
	       S->c.kills_consumer > 0, "stress_did_work");

	judge(&v);
	total = v.early + v.bad_error + v.late + v.never + v.efd_value + v.efd_twice +
		v.import_bad + v.import_early + v.merge_early + v.tl_early + v.order;
	tap_diag("checker: %" PRIu64 " fences judged: %" PRIu64 " signalled, %" PRIu64
		 " -ETIMEDOUT, %" PRIu64 " -ECANCELED, %" PRIu64 " -EIO, %" PRIu64
		 " eventfd wake-ups; latest end %.3f s after a deadline", v.judged,
		 v.signalled, v.timedout, v.canceled, v.eio, v.efd_ended,
		 (double)v.max_late / S_NS);
	tap_diag("violations: %" PRIu64 " (early %" PRIu64 ", wrong error %" PRIu64
		 ", late %" PRIu64 ", never ended %" PRIu64 ", eventfd value %" PRIu64
		 ", eventfd twice %" PRIu64 ", import %" PRIu64 "+%" PRIu64 ", merge %" PRIu64
		 ", timeline %" PRIu64 ", order %" PRIu64 ")", total, v.early, v.bad_error,
		 v.late, v.never, v.efd_value, v.efd_twice, v.import_bad, v.import_early,
		 v.merge_early, v.tl_early, v.order);
	tap_ok(v.judged > 100 && v.signalled > 0, "checker_judged_fences (%" PRIu64 ")",
	       v.judged);
	tap_ok(v.early == 0, "no_fence_signals_before_its_event");
	tap_ok(v.bad_error == 0, "errors_only_from_their_causes");
	tap_ok(v.late == 0 && v.never == 0, "every_fence_ends_within_deadline_plus_slack");
	tap_ok(v.efd_value + v.efd_twice + v.import_bad + v.import_early == 0,
	       "nothing_signals_twice");
	tap_ok(v.merge_early + v.tl_early == 0, "merged_fences_end_after_their_parts");
	tap_diag("order: %" PRIu64 " fences ended after a higher seqno in one error pass "
		 "(a figure: not a violation)", v.order_pass);
	tap_ok(v.order == 0, "fences_of_an_event_end_in_order");
	stress_check_zero("counters_zero_after", 0, 0, 10000);
	printf("1..%u\n", tap_count);
	return tap_exit();
}
