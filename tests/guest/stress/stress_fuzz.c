// SPDX-License-Identifier: MIT
/*
 * stress_fuzz: a seeded, reproducible ioctl fuzzer for /dev/kfdsync and
 * /dev/kfdsync_timeline (and the sync_files they make).
 *
 * How this program works. A forked worker does the fuzzing; the parent
 * only waits for it, so that a worker killed by a kernel oops (or by its
 * own crash) is still reported: the worker keeps its last calls in memory
 * shared with the parent, which prints them with the seed. The worker
 * first makes valid handles — /dev/kfd (libhsakmt) and signal events, the
 * GPU simulator with a queue that keeps signalling them, a kfdsync context
 * with registered events, exported sync_files and eventfds, CPU timelines
 * and their fences, pipes, directories, closed fds — so that random calls
 * reach deep paths, then runs THREADS threads on the one context, each
 * with its own generator seeded from --seed: random requests (the known
 * ones, the known numbers with wrong sizes and directions, unknown
 * numbers), random structs (flags, pads, ids, ages, deadlines, counts,
 * conditions from pools of meaningful and random values, every fd kind)
 * or bad pointers (NULL, unmapped, inaccessible, read-only, kernel
 * addresses, the events page, misaligned). Every address the kernel may
 * write through is memory of ours that nothing else uses (the scratch
 * pages, the decoy, the events page): an "unmapped" address is one below
 * mmap_min_addr, which no later mmap() can reuse — a page unmapped after
 * use would soon hold a thread's stack or the sanitizer's allocator state
 * (it did: the worker's ASan allocator found its metadata corrupt). Now and
 * then a thread forks a child that replays calls on the inherited context
 * (or one passed over a UNIX socket): everything but INFO and STATUS must
 * fail there.
 *
 * A call fails the run when it returns an errno no kfdsync ioctl documents
 * (or, in a child, succeeds where it must not). The runner fails the boot
 * on any kernel splat. The same --seed gives the same calls per thread
 * (their interleaving is the scheduler's).
 */

#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "sim_test.h"
#include "stress.h"

#define THREADS		3
#define POOL		48		/* fds one thread keeps */
#define RING		32		/* last calls kept per thread */
#define NEVENTS		8

struct call_rec {
	uint64_t n;
	unsigned long req;
	int fd;
	int ret;
	uint64_t arg;
	uint32_t words[6];
};

struct shared {
	_Atomic uint64_t calls, ok, errors, unexpected, forks, child_bad, splits;
	_Atomic uint64_t by_errno[160];
	struct {
		_Atomic uint64_t pos;
		struct call_rec ring[RING];
	} t[THREADS + 1];
};

static struct shared *SH;
static struct stress_opts opts;
static int ctx, sim;
static dev_t kfd_rdev, kfdsim_rdev;
static uint32_t queue;
static HsaEvent *events[NEVENTS];
static int infra_fds[32];		/* every fd kind, never closed by threads */
static unsigned int n_infra;
static uint64_t addrs[24];
static unsigned int n_addrs;
static uint8_t *scratch, *ro_page;
static _Atomic int stop_signaller;
/* Our own memory the kernel may write anywhere in: nothing else lives here. */
static uint64_t decoy[512] __attribute__((aligned(4096)));

/* Every errno a kfdsync ioctl documents (and sync_file's own). */
static bool errno_documented(int e)
{
	switch (e) {
	case EFAULT: case EINVAL: case ENOTTY: case EPERM: case ENOENT: case EEXIST:
	case ENOSPC: case EBADF: case EMFILE: case ENOMEM: case EOPNOTSUPP: case ESRCH:
	case EBUSY:
		return true;
	}
	return false;
}

static const unsigned long known[] = {
	KFDSYNC_IOCTL_INFO, KFDSYNC_IOCTL_EVENT_REGISTER, KFDSYNC_IOCTL_EVENT_UNREGISTER,
	KFDSYNC_IOCTL_EVENT_QUERY, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, KFDSYNC_IOCTL_EXPORT_EVENTFD,
	KFDSYNC_IOCTL_RELAY_SIGNAL, KFDSYNC_IOCTL_IMPORT_SYNC_FILE,
	KFDSYNC_IOCTL_EXPORT_CONDITION, KFDSYNC_IOCTL_STATUS, KFDSYNC_IOCTL_RELAY_SIGNALS,
	KFDSYNC_TL_IOC_CREATE_FENCE, KFDSYNC_TL_IOC_INC, KFDSYNC_TL_IOC_GET_DEADLINE,
	SYNC_IOC_MERGE, SYNC_IOC_FILE_INFO,
};
#define N_KNOWN (sizeof(known) / sizeof(known[0]))

struct fuzzer {
	int idx;
	uint64_t seed;
	int pool[POOL];
	unsigned int npool;
	int tl;
	int last;		/* the last call's result */
	uint8_t arg[256] __attribute__((aligned(8)));
};

static int pick_fd(struct fuzzer *z)
{
	uint64_t r = rng_below(&z->seed, 100);

	if (r < 45 && z->npool)
		return z->pool[rng_below(&z->seed, z->npool)];
	if (r < 85)
		return infra_fds[rng_below(&z->seed, n_infra)];
	if (r < 90)
		return -1;
	if (r < 95)
		return (int)rng_below(&z->seed, 1024);
	return (int)rng_next(&z->seed);
}

static uint32_t pick_id(struct fuzzer *z)
{
	uint64_t r = rng_below(&z->seed, 10);

	if (r < 6)
		return events[rng_below(&z->seed, NEVENTS)]->EventId;
	if (r == 6)
		return 0;
	if (r == 7)
		return 4095 + (uint32_t)rng_below(&z->seed, 3);
	return (uint32_t)rng_next(&z->seed);
}

static uint64_t pick_age(struct fuzzer *z, uint32_t id)
{
	uint64_t age = raw_age(ctx, id);

	switch (rng_below(&z->seed, 6)) {
	case 0: case 1:
		return age == UINT64_MAX ? 0 : age;
	case 2:
		return age == UINT64_MAX ? 1 : age + 1;
	case 3:
		return age && age != UINT64_MAX ? age - 1 : 0;
	case 4:
		return UINT64_MAX;
	default:
		return rng_next(&z->seed);
	}
}

static uint64_t pick_deadline(struct fuzzer *z)
{
	switch (rng_below(&z->seed, 6)) {
	case 0:
		return 0;
	case 1:
		return 1;				/* long past */
	case 2:
		return (uint64_t)(now_ns() + (int64_t)rng_below(&z->seed, 200) * MS_NS);
	case 3:
		return UINT64_MAX;
	case 4:
		return (uint64_t)now_ns() - 1;
	default:
		return rng_next(&z->seed);
	}
}

static uint32_t pick_flags(struct fuzzer *z)
{
	switch (rng_below(&z->seed, 5)) {
	case 0: case 1:
		return 0;
	case 2:
		return (uint32_t)(1u << rng_below(&z->seed, 32));
	case 3:
		return (uint32_t)rng_below(&z->seed, 64);
	default:
		return (uint32_t)rng_next(&z->seed);
	}
}

static uint32_t pick_pad(struct fuzzer *z)
{
	return rng_one_in(&z->seed, 6) ? (uint32_t)rng_next(&z->seed) | 1 : 0;
}

static uint64_t pick_addr(struct fuzzer *z)
{
	if (rng_one_in(&z->seed, 10))
		return rng_next(&z->seed);
	return addrs[rng_below(&z->seed, n_addrs)];
}

/* Fill z->arg for @req with meaningful random fields; returns its size. */
static size_t fill_arg(struct fuzzer *z, unsigned long req)
{
	size_t size = _IOC_SIZE(req);
	uint8_t *a = z->arg;

	memset(a, 0, sizeof(z->arg));
	if (size > sizeof(z->arg))
		size = sizeof(z->arg);
	if (req == KFDSYNC_IOCTL_INFO || req == KFDSYNC_IOCTL_STATUS) {
		((uint32_t *)a)[0] = pick_flags(z);
		((uint32_t *)a)[1] = pick_pad(z);
	} else if (req == KFDSYNC_IOCTL_EVENT_REGISTER) {
		struct kfdsync_event_register *r = (void *)a;
		HsaEvent *ev = events[rng_below(&z->seed, NEVENTS)];

		r->event_id = rng_one_in(&z->seed, 2) ? ev->EventId : pick_id(z);
		r->flags = pick_flags(z);
		r->slot_addr = rng_one_in(&z->seed, 2) ? slot_addr(ev) : pick_addr(z);
	} else if (req == KFDSYNC_IOCTL_EVENT_UNREGISTER || req == KFDSYNC_IOCTL_RELAY_SIGNAL) {
		((uint32_t *)a)[0] = pick_id(z);
		((uint32_t *)a)[1] = pick_flags(z);
	} else if (req == KFDSYNC_IOCTL_EVENT_QUERY) {
		((uint32_t *)a)[0] = pick_id(z);
		((uint32_t *)a)[1] = pick_flags(z);
	} else if (req == KFDSYNC_IOCTL_EXPORT_SYNC_FILE || req == KFDSYNC_IOCTL_EXPORT_EVENTFD) {
		struct kfdsync_export *x = (void *)a;

		x->event_id = pick_id(z);
		x->flags = pick_flags(z);
		x->age = pick_age(z, x->event_id);
		x->deadline_ns = pick_deadline(z);
		x->fd = pick_fd(z);
		x->pad = pick_pad(z);
	} else if (req == KFDSYNC_IOCTL_RELAY_SIGNALS) {
		struct kfdsync_relay_signals *x = (void *)a;

		x->event_id = pick_id(z);
		x->flags = pick_flags(z);
		x->count = rng_one_in(&z->seed, 3) ? (uint32_t)rng_next(&z->seed) :
			   (uint32_t)rng_below(&z->seed, 3);
		x->pad = pick_pad(z);
	} else if (req == KFDSYNC_IOCTL_IMPORT_SYNC_FILE) {
		struct kfdsync_import *x = (void *)a;

		x->fd = pick_fd(z);
		x->flags = rng_one_in(&z->seed, 3) ? pick_flags(z) :
			   (uint32_t)rng_below(&z->seed, 0x40);
		if (x->flags & KFDSYNC_IMPORT_MEMORY || rng_one_in(&z->seed, 5)) {
			x->addr = pick_addr(z);
			x->value = rng_one_in(&z->seed, 2) ? rng_below(&z->seed, 4) : rng_next(&z->seed);
			x->error_value = rng_below(&z->seed, 4);
		}
		if (x->flags & KFDSYNC_IMPORT_SET_EVENT || rng_one_in(&z->seed, 5))
			x->event_id = pick_id(z);
		if (x->flags & KFDSYNC_IMPORT_FAIL_EVENT || rng_one_in(&z->seed, 5))
			x->fail_event_id = pick_id(z);
		if (x->flags & KFDSYNC_IMPORT_EVENTFD || rng_one_in(&z->seed, 5))
			x->eventfd = pick_fd(z);
		x->pad = pick_pad(z);
	} else if (req == KFDSYNC_IOCTL_EXPORT_CONDITION) {
		struct kfdsync_export_condition *x = (void *)a;

		x->event_id = pick_id(z);
		x->flags = rng_one_in(&z->seed, 2) ? 0 : pick_flags(z);
		x->value_addr = pick_addr(z);
		x->compare_value = (int64_t)rng_below(&z->seed, 4) - 1;
		x->deadline_ns = pick_deadline(z);
		x->condition = rng_one_in(&z->seed, 4) ? (uint32_t)rng_next(&z->seed) :
			       (uint32_t)rng_below(&z->seed, 4);
		x->fd = pick_fd(z);
	} else if (req == KFDSYNC_TL_IOC_CREATE_FENCE) {
		struct kfdsync_tl_create_fence *x = (void *)a;

		x->value = rng_one_in(&z->seed, 4) ? (uint32_t)rng_next(&z->seed) :
			   (uint32_t)rng_below(&z->seed, 64);
		if (rng_one_in(&z->seed, 3))
			memset(x->name, 'x', sizeof(x->name));	/* not terminated */
		else
			strcpy(x->name, "fuzz");
	} else if (req == KFDSYNC_TL_IOC_INC) {
		*(uint32_t *)a = rng_one_in(&z->seed, 5) ? (uint32_t)rng_next(&z->seed) :
				 (uint32_t)rng_below(&z->seed, 3);
	} else if (req == KFDSYNC_TL_IOC_GET_DEADLINE) {
		struct kfdsync_tl_get_deadline *x = (void *)a;

		x->deadline_ns = rng_one_in(&z->seed, 5) ? rng_next(&z->seed) : 0;
		x->pad = pick_pad(z);
		x->fence_fd = pick_fd(z);
	} else if (req == SYNC_IOC_MERGE) {
		struct sync_merge_data *x = (void *)a;

		strcpy(x->name, "fuzz");
		x->fd2 = pick_fd(z);
		x->flags = pick_flags(z);
		x->pad = pick_pad(z);
	} else if (req == SYNC_IOC_FILE_INFO) {
		struct sync_file_info *x = (void *)a;

		x->num_fences = (uint32_t)rng_below(&z->seed, 3);
		x->sync_fence_info = rng_one_in(&z->seed, 2) ? (uintptr_t)(scratch + 2048) :
				     pick_addr(z);
		x->flags = pick_flags(z);
	} else {
		size_t i;

		for (i = 0; i < size; i += 8) {
			uint64_t v = rng_next(&z->seed);

			memcpy(a + i, &v, size - i < 8 ? size - i : 8);
		}
	}
	return size;
}

/* A request: known, known with another size or direction, or unknown. */
static unsigned long pick_req(struct fuzzer *z)
{
	unsigned long req = known[rng_below(&z->seed, N_KNOWN)];

	switch (rng_below(&z->seed, 20)) {
	case 0:		/* wrong size */
		return _IOC(_IOC_DIR(req), _IOC_TYPE(req), _IOC_NR(req),
			    rng_below(&z->seed, 256));
	case 1:		/* wrong direction */
		return _IOC(rng_below(&z->seed, 4), _IOC_TYPE(req), _IOC_NR(req), _IOC_SIZE(req));
	case 2:		/* unknown number of kfdsync's type */
		return _IOC(rng_below(&z->seed, 4), KFDSYNC_IOCTL_BASE, rng_below(&z->seed, 256),
			    rng_below(&z->seed, 256));
	case 3:
		return rng_one_in(&z->seed, 2) ? (unsigned long)rng_next(&z->seed) :
		       _IOC(rng_below(&z->seed, 4), 'W', rng_below(&z->seed, 8),
			    rng_below(&z->seed, 64));
	default:
		return req;
	}
}

/*
 * The fd a request goes to. Never /dev/kfd or /dev/kfdsim: they are fds to
 * pass, not to fuzz (amdkfd dispatches on the ioctl number alone, so a
 * kfdsync request there is some amdkfd ioctl that may remap our memory).
 */
static int pick_target_any(struct fuzzer *z, unsigned long req, uint64_t r);

static int pick_target(struct fuzzer *z, unsigned long req)
{
	uint64_t r = rng_below(&z->seed, 10);
	int fd;

	struct stat st;

	fd = pick_target_any(z, req, r);
	/* Also libhsakmt's own fd of /dev/kfd, under any number. */
	if (!fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	    (st.st_rdev == kfd_rdev || st.st_rdev == kfdsim_rdev))
		return ctx;
	return fd;
}

static int pick_target_any(struct fuzzer *z, unsigned long req, uint64_t r)
{
	if (_IOC_TYPE(req) == 'W' && r < 7)
		return rng_one_in(&z->seed, 2) ? z->tl : infra_fds[1];
	if ((req == SYNC_IOC_MERGE || req == SYNC_IOC_FILE_INFO) && r < 7)
		return pick_fd(z);
	if (r < 9)
		return ctx;
	return pick_fd(z);
}

static void keep_fd(struct fuzzer *z, int fd)
{
	if (fd < 0)
		return;
	if (z->npool == POOL) {
		unsigned int k = (unsigned int)rng_below(&z->seed, POOL);

		close(z->pool[k]);
		z->pool[k] = fd;
		return;
	}
	z->pool[z->npool++] = fd;
}

static void record(int t, unsigned long req, int fd, int ret, const void *arg, uint64_t argp)
{
	uint64_t pos = atomic_fetch_add(&SH->t[t].pos, 1);
	struct call_rec *c = &SH->t[t].ring[pos % RING];

	c->n = pos;
	c->req = req;
	c->fd = fd;
	c->ret = ret;
	c->arg = argp;
	if (arg)
		memcpy(c->words, arg, sizeof(c->words));
	else
		memset(c->words, 0, sizeof(c->words));
}

/* One random call; returns the -errno or the result. */
static int fuzz_call(struct fuzzer *z, bool child)
{
	unsigned long req = pick_req(z);
	int fd = pick_target(z, req), ret;
	uint64_t argp;
	bool bad_ptr = rng_one_in(&z->seed, 6);

	fill_arg(z, req);
	argp = bad_ptr ? pick_addr(z) : (uintptr_t)z->arg;
	if (bad_ptr && rng_one_in(&z->seed, 3))
		argp = (uintptr_t)z->arg + 1 + rng_below(&z->seed, 7);	/* misaligned */
	ret = ioctl(fd, req, (void *)(uintptr_t)argp);
	ret = ret < 0 ? -errno : ret;
	z->last = ret;
	atomic_fetch_add(&SH->calls, 1);
	record(z->idx, req, fd, ret, bad_ptr ? NULL : z->arg, argp);
	if (ret < 0) {
		atomic_fetch_add(&SH->errors, 1);
		if (-ret < 160)
			atomic_fetch_add(&SH->by_errno[-ret], 1);
	} else {
		atomic_fetch_add(&SH->ok, 1);
	}
	if (child) {
		bool open_to_all = req == KFDSYNC_IOCTL_INFO || req == KFDSYNC_IOCTL_STATUS;

		if (fd == ctx && ret >= 0 && !open_to_all &&
		    _IOC_TYPE(req) == KFDSYNC_IOCTL_BASE)
			return INT32_MIN;
		return ret;
	}
	if (ret < 0 && !errno_documented(-ret) && !(-ret == EINTR || -ret == EAGAIN))
		return INT32_MIN + 1;
	/* Keep what was made, so later calls use it. */
	if (ret >= 0 && !bad_ptr && fd == ctx) {
		if (req == KFDSYNC_IOCTL_EXPORT_SYNC_FILE)
			keep_fd(z, ((struct kfdsync_export *)z->arg)->fd);
		else if (req == KFDSYNC_IOCTL_EXPORT_CONDITION &&
			 !(((struct kfdsync_export_condition *)z->arg)->flags &
			   KFDSYNC_CONDITION_EVENTFD))
			keep_fd(z, ((struct kfdsync_export_condition *)z->arg)->fd);
	} else if (ret >= 0 && !bad_ptr && req == KFDSYNC_TL_IOC_CREATE_FENCE &&
		   (fd == z->tl || fd == infra_fds[1])) {
		keep_fd(z, ((struct kfdsync_tl_create_fence *)z->arg)->fence);
	} else if (ret >= 0 && !bad_ptr && req == SYNC_IOC_MERGE) {
		keep_fd(z, ((struct sync_merge_data *)z->arg)->fence);
	}
	return ret;
}

static void dump_calls(int t)
{
	uint64_t pos = atomic_load(&SH->t[t].pos), i;

	for (i = pos > RING ? pos - RING : 0; i < pos; i++) {
		const struct call_rec *c = &SH->t[t].ring[i % RING];

		tap_diag("  thread %d call %" PRIu64 ": ioctl(%d, %#lx, %#" PRIx64 ") = %d; arg %08x %08x "
			 "%08x %08x %08x %08x", t, c->n, c->fd, c->req, c->arg, c->ret, c->words[0],
			 c->words[1], c->words[2], c->words[3], c->words[4], c->words[5]);
	}
}

/* In a child: the inherited (or passed) context works for nobody else. */
static void fork_race(struct fuzzer *z)
{
	int sv[2], status, i, bad = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return;
	atomic_fetch_add(&SH->forks, 1);
	pid = fork();
	if (pid == 0) {
		struct fuzzer c = *z;
		int fds[STRESS_MAX_FDS];
		unsigned int n = 0;
		char m;

		c.idx = THREADS;
		/* Half the time use a copy received over the socket. */
		if (scm_recv(sv[1], &m, 1, fds, STRESS_MAX_FDS, &n, 0) == 1 && n == 1 && m == 'y')
			ctx = fds[0];
		for (i = 0; i < 40; i++)
			if (fuzz_call(&c, true) == INT32_MIN)
				bad++;
		_exit(bad ? 1 : 0);
	}
	if (pid > 0) {
		char m = rng_one_in(&z->seed, 2) ? 'y' : 'n';

		scm_send(sv[0], &m, 1, &ctx, 1, 0);
		for (i = 0; i < 10; i++)
			fuzz_call(z, false);	/* race the child */
		if (waitpid(pid, &status, 0) == pid &&
		    (!WIFEXITED(status) || WEXITSTATUS(status))) {
			atomic_fetch_add(&SH->child_bad, 1);
			tap_diag("fork child: a foreign process's call on the context succeeded "
				 "(status %#x); its last calls:", status);
			dump_calls(THREADS);
		}
	}
	close(sv[0]);
	close(sv[1]);
}

struct thread_arg {
	struct fuzzer z;
	unsigned long calls;
};

static void *fuzz_thread(void *arg)
{
	struct thread_arg *a = arg;
	struct fuzzer *z = &a->z;
	unsigned long i;

	z->tl = raw_open(KFDSYNC_TL_DEVICE);
	for (i = 0; i < a->calls; i++) {
		int ret;

		if (rng_one_in(&z->seed, 400)) {
			fork_race(z);
			continue;
		}
		if (z->npool && rng_one_in(&z->seed, 20)) {	/* close one */
			unsigned int k = (unsigned int)rng_below(&z->seed, z->npool);

			close(z->pool[k]);
			z->pool[k] = z->pool[--z->npool];
		}
		ret = fuzz_call(z, false);
		if (ret == INT32_MIN + 1) {
			uint64_t u = atomic_fetch_add(&SH->unexpected, 1);

			if (u < 3) {
				tap_diag("UNEXPECTED errno %d (%s): seed %" PRIu64 ", thread %d, call %lu; "
					 "last calls:", -z->last, strerror(-z->last), opts.seed,
					 z->idx, i);
				dump_calls(z->idx);
			}
		}
	}
	while (z->npool)
		close(z->pool[--z->npool]);
	close(z->tl);
	return NULL;
}

/* Keeps the events signalling (GPU and CPU), so fences end. */
static void *signaller(void *arg)
{
	uint64_t seed = *(uint64_t *)arg, n = 0;

	while (!atomic_load(&stop_signaller)) {
		HsaEvent *ev = events[rng_below(&seed, NEVENTS)];
		uint32_t dw[16];
		struct pm4_buf b = PM4_BUF_INIT(dw);
		uint64_t end;

		if (rng_one_in(&seed, 2)) {
			hsaKmtSetEvent(ev);
		} else {
			pm4_release_mem_event(&b, slot_addr(ev), ev->EventId);
			if (!kfdsim_submit_buf(sim, queue, &b, &end) && !(++n % 8))
				kfdsim_queue_wait(sim, queue, end, 10000);
		}
		sleep_ns((int64_t)rng_below(&seed, 2000) * 1000);
	}
	return NULL;
}

static void make_handles(void)
{
	int p[2], i, fd;
	uint8_t *no_access;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD failed");
	sim = kfdsim_open();
	if (sim < 0)
		tap_bail("kfdsim_open: %s", strerror(-sim));
	queue = queue_create(sim);
	ctx = raw_open(RAW_KFDSYNC_DEV);
	if (ctx < 0)
		tap_bail("open kfdsync: %s", strerror(-ctx));
	for (i = 0; i < NEVENTS; i++) {
		events[i] = create_event(HSA_EVENTTYPE_SIGNAL, i & 1);
		if (!events[i])
			tap_bail("hsaKmtCreateEvent failed");
		if (i < NEVENTS - 2)
			raw_register(ctx, events[i]->EventId, slot_addr(events[i]));
	}
	/* Every kind of fd. */
	infra_fds[n_infra++] = ctx;
	infra_fds[n_infra++] = raw_open(KFDSYNC_TL_DEVICE);
	infra_fds[n_infra++] = raw_export(ctx, events[0]->EventId, raw_age(ctx, events[0]->EventId), 0);
	infra_fds[n_infra++] = raw_export(ctx, events[1]->EventId, 0, 0);	/* born signalled? */
	infra_fds[n_infra++] = raw_tl_fence(infra_fds[1], 5);
	infra_fds[n_infra++] = raw_tl_fence(infra_fds[1], 0);
	infra_fds[n_infra++] = raw_merge(infra_fds[2], infra_fds[4]);
	infra_fds[n_infra++] = eventfd(0, EFD_CLOEXEC);
	infra_fds[n_infra++] = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	infra_fds[n_infra++] = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	infra_fds[n_infra++] = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);
	{
		struct stat st;

		if (!stat("/dev/kfd", &st))
			kfd_rdev = st.st_rdev;
		if (!stat("/dev/kfdsim", &st))
			kfdsim_rdev = st.st_rdev;
	}
	if (!pipe2(p, O_CLOEXEC)) {
		infra_fds[n_infra++] = p[0];
		infra_fds[n_infra++] = p[1];
	}
	infra_fds[n_infra++] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	infra_fds[n_infra++] = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	infra_fds[n_infra++] = raw_open(RAW_KFDSYNC_DEV);	/* a second context */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close(fd);
	infra_fds[n_infra++] = fd;				/* closed */
	for (i = 0; i < (int)n_infra; i++)
		if (infra_fds[i] < 0)
			infra_fds[i] = 1000 + i;		/* some failed: a closed number */

	/* Every kind of address. */
	scratch = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	no_access = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED || ro_page == MAP_FAILED || no_access == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	addrs[n_addrs++] = 0;
	addrs[n_addrs++] = (uintptr_t)scratch;
	addrs[n_addrs++] = (uintptr_t)scratch + 8;
	addrs[n_addrs++] = (uintptr_t)scratch + 4;			/* 4-aligned */
	addrs[n_addrs++] = (uintptr_t)scratch + 3;			/* misaligned */
	addrs[n_addrs++] = (uintptr_t)scratch + 4096 - 4;		/* straddles */
	addrs[n_addrs++] = (uintptr_t)scratch + 2 * 4096;
	addrs[n_addrs++] = (uintptr_t)ro_page;
	addrs[n_addrs++] = (uintptr_t)no_access;
	addrs[n_addrs++] = 4096;		/* below mmap_min_addr: never mapped */
	addrs[n_addrs++] = 0xffffffff81000000ULL;			/* kernel text */
	addrs[n_addrs++] = 0xffff888000000000ULL;			/* direct map */
	addrs[n_addrs++] = 0x0000800000000000ULL;			/* non-canonical */
	addrs[n_addrs++] = slot_addr(events[0]);			/* the events page */
	addrs[n_addrs++] = slot_addr(events[2]) + 4;
	addrs[n_addrs++] = slot_addr(events[0]) & ~4095ULL;
	addrs[n_addrs++] = (uintptr_t)decoy;			/* our own data */
	addrs[n_addrs++] = UINT64_MAX - 7;
}

int main(int argc, char **argv)
{
	struct thread_arg ta[THREADS];
	pthread_t t[THREADS], sig;
	uint64_t sseed, seed;
	int64_t t0;
	pid_t pid;
	int status, i;

	scrub_hsa_env();
	stress_parse(argc, argv, "stress_fuzz", 0, 4500, &opts);
	require_sim_guest();
	require_sim_interrupts();	/* its GPU work is the simulator's */
	if (access(RAW_KFDSYNC_DEV, F_OK)) {
		printf("1..0 # SKIP no %s (kfdsync not loaded)\n", RAW_KFDSYNC_DEV);
		return 0;
	}
	SH = mmap(NULL, sizeof(*SH), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (SH == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	stress_check_zero("counters_zero_before_fuzz", 0, 0, 2000);
	t0 = now_ns();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		make_handles();
		seed = opts.seed;
		sseed = rng_next(&seed);
		pthread_create(&sig, NULL, signaller, &sseed);
		for (i = 0; i < THREADS; i++) {
			memset(&ta[i], 0, sizeof(ta[i]));
			ta[i].z.idx = i;
			ta[i].z.seed = opts.seed + 0x1000193ULL * (uint64_t)(i + 1);
			ta[i].calls = opts.iterations / THREADS;
			pthread_create(&t[i], NULL, fuzz_thread, &ta[i]);
		}
		for (i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		atomic_store(&stop_signaller, 1);
		pthread_join(sig, NULL);
		close(ctx);
		kfdsim_queue_destroy(sim, queue);
		close(sim);
		hsaKmtCloseKFD();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		tap_bail("waitpid: %s", strerror(errno));
	if (!tap_ok(WIFEXITED(status) && !WEXITSTATUS(status),
		   "fuzzer_survives (status %#x)", status)) {
		tap_diag("the fuzzer died: seed %" PRIu64 "; its last calls:", opts.seed);
		for (i = 0; i < THREADS; i++)
			dump_calls(i);
	}
	tap_diag("fuzz calls: %" PRIu64 " in %.1f s (%" PRIu64 " succeeded, %" PRIu64
		 " failed; %" PRIu64 " forks racing the context)", SH->calls,
		 (double)(now_ns() - t0) / S_NS, SH->ok, SH->errors, SH->forks);
	{
		char line[512];
		size_t len = 0;

		for (i = 1; i < 160; i++)
			if (SH->by_errno[i])
				len += snprintf(line + len, sizeof(line) - len, " %s %" PRIu64 ",",
						strerrorname_np(i) ? strerrorname_np(i) : "?",
						SH->by_errno[i]);
		tap_diag("errnos:%s", line);
	}
	tap_ok(SH->calls >= opts.iterations * 9 / 10, "fuzz_budget_spent (%" PRIu64 " calls)",
	       SH->calls);
	tap_ok(SH->unexpected == 0, "fuzz_errnos_documented (%" PRIu64 " unexpected)",
	       SH->unexpected);
	tap_ok(SH->child_bad == 0, "fuzz_foreign_process_refused (%" PRIu64 " children)",
	       SH->child_bad);
	stress_check_zero("counters_zero_after_fuzz", 0, 0, 15000);
	printf("1..%u\n", tap_count);
	return tap_exit();
}
