/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the stress programs (tests/guest/stress): the time
 * budget and seed, a reproducible random generator, fd passing over UNIX
 * sockets, fence timestamps, and the end-of-run checks that every counter
 * went back to zero. They run as root in tests/vm/run's guest.
 *
 * Budget: each program has a default that fits CI (about a minute each
 * under TCG on 2 cores). KFDSYNC_STRESS_SCALE=F (a number, default 1)
 * multiplies every budget; --seconds N and --iterations N set one program's
 * budget directly; --seed N reproduces a run (the seed is printed first).
 */
#ifndef KFDSYNC_TESTS_STRESS_H
#define KFDSYNC_TESTS_STRESS_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "child.h"
#include "kfdsync_raw.h"
#include "kmod.h"
#include "tap.h"

#define MS_NS			1000000LL
#define S_NS			1000000000LL
#define NOBODY_UID		65534

/* ---- budget and seed ---- */

struct stress_opts {
	double seconds;		/* time budget, already scaled */
	unsigned long iterations;	/* count budget, already scaled */
	uint64_t seed;
	double scale;
};

/*
 * Parse --seconds N, --iterations N, --seed N; defaults @sec and @iter are
 * multiplied by KFDSYNC_STRESS_SCALE (an explicit --seconds/--iterations is
 * taken as it is). Prints the seed as the first diagnostic.
 */
static inline void stress_parse(int argc, char **argv, const char *prog, double sec,
				unsigned long iter, struct stress_opts *o)
{
	const char *env = getenv("KFDSYNC_STRESS_SCALE");
	bool seed_given = false;
	int i;

	o->scale = env && atof(env) > 0 ? atof(env) : 1.0;
	o->seconds = sec * o->scale;
	o->iterations = (unsigned long)(iter * o->scale);
	o->seed = 0;
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			o->seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--iterations"))
			o->iterations = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seed")) {
			o->seed = strtoull(argv[i + 1], NULL, 0);
			seed_given = true;
		}
	}
	if (!seed_given) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		o->seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^
			  ((uint64_t)getpid() << 32);
	}
	printf("TAP version 13\n");
	printf("# %s: seed %" PRIu64 " (reproduce: %s --seed %" PRIu64
	       "), budget %.1f s / %lu iterations, scale %.2f\n", prog, o->seed, prog,
	       o->seed, o->seconds, o->iterations, o->scale);
	fflush(stdout);
}

/* ---- random numbers (splitmix64: tiny, seedable, good enough) ---- */

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); 0 when n is 0. */
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}

/* True with probability 1/n. */
static inline bool rng_one_in(uint64_t *s, uint64_t n)
{
	return rng_below(s, n) == 0;
}

/* ---- time ---- */

static inline int64_t now_ns(void)
{
	return raw_now_ns();
}

static inline void sleep_ns(int64_t ns)
{
	struct timespec ts = { ns / S_NS, ns % S_NS };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- processes ---- */

/* fork(), stdout flushed first; bails out on failure. */
static inline pid_t fork_or_bail(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	return pid;
}

/* ---- fd passing (child.h's scm_send()/scm_recv()): up to 4 fds a message ---- */

#define STRESS_MAX_FDS	4


/* ---- fences ---- */

/*
 * The fences of sync_file @fd: up to @max entries of @out, their number
 * returned (or -errno). Each has its status (1, 0 pending, -errno) and the
 * time it ended (timestamp_ns, CLOCK_MONOTONIC).
 */
static inline int fence_infos(int fd, struct sync_fence_info *out, unsigned int max,
			      struct sync_file_info *file)
{
	struct sync_file_info fi;

	memset(&fi, 0, sizeof(fi));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &fi))
		return -errno;
	if (fi.num_fences > max)
		return -E2BIG;
	memset(out, 0, sizeof(*out) * fi.num_fences);
	fi.sync_fence_info = (uintptr_t)out;
	fi.status = 0;
	fi.flags = 0;
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &fi))
		return -errno;
	if (file)
		*file = fi;
	return (int)fi.num_fences;
}

/* ---- the end of a run: every counter back to zero ---- */

/* First number in the first line of @path starting with "# " (debugfs). */
static inline long debugfs_head_count(const char *path)
{
	char buf[256];
	long v = -1;

	if (read_text(path, buf, sizeof(buf)))
		return -1;
	if (buf[0] == '#' && sscanf(buf + 1, "%ld", &v) == 1)
		return v;
	return -1;
}

/* "N live fences" of <debugfs>/kfdsync/timelines, or -1. */
static inline long debugfs_tl_live_fences(void)
{
	char buf[256], *p;

	if (read_text("/sys/kernel/debug/kfdsync/timelines", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "timelines, ");
	return p ? strtol(p + strlen("timelines, "), NULL, 10) : -1;
}

/* The number after "@key@sep" at the start of a line of @path (procfs), or -1. */
static inline long proc_field(const char *path, const char *key, char sep)
{
	char line[128];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == sep) {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The value of @key in /proc/meminfo (kB), or -1. */
static inline long meminfo_kb(const char *key)
{
	return proc_field("/proc/meminfo", key, ':');
}

static inline long vmstat_value(const char *name)
{
	return proc_field("/proc/vmstat", name, ' ');
}

static inline void vmstat_refresh(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "1", 1) < 0) {
			/* EINVAL when a counter went negative: reported by the caller */
		}
		close(fd);
	}
}

/* kfdsim's live queues, system-wide, or -1 (no simulator). */
static inline long kfdsim_live_queues(void)
{
	struct kfdsim_info_raw {
		uint32_t flags, pad, abi_version, live_queues, max_queues, poll_us,
			 amdkfd_bound, pad2;
	} info = { 0 };
	int fd = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);
	long v = -1;

	if (fd < 0)
		return -1;
	/* KFDSIM_IOC_INFO: _IOWR(0xB8, 0x00, struct kfdsim_info) */
	if (!ioctl(fd, _IOWR(0xB8, 0x00, struct kfdsim_info_raw), &info))
		v = info.live_queues;
	close(fd);
	return v;
}

struct stress_counters {
	long ctx_user, tl_user, ev_user, fences_user;	/* KFDSYNC_IOCTL_STATUS */
	long ctx_debugfs, tl_debugfs, tl_live_fences;	/* debugfs */
	long sim_queues;
	long pin_acquired, pin_released;
};

static inline void stress_counters_read(struct stress_counters *c)
{
	struct kfdsync_status st;
	int fd = raw_open(RAW_KFDSYNC_DEV);

	memset(c, 0xff, sizeof(*c));
	if (fd >= 0 && !raw_status(fd, &st)) {
		/* Our own probe context is one of the user's: not counted. */
		c->ctx_user = (long)st.user_contexts - 1;
		c->tl_user = st.user_timelines;
		c->ev_user = st.user_events;
		c->fences_user = st.user_fences;
	}
	c->ctx_debugfs = debugfs_head_count("/sys/kernel/debug/kfdsync/contexts");
	if (c->ctx_debugfs > 0)
		c->ctx_debugfs--;	/* the probe */
	if (fd >= 0)
		close(fd);
	c->tl_debugfs = debugfs_head_count("/sys/kernel/debug/kfdsync/timelines");
	c->tl_live_fences = debugfs_tl_live_fences();
	c->sim_queues = kfdsim_live_queues();
	vmstat_refresh();
	c->pin_acquired = vmstat_value("nr_foll_pin_acquired");
	c->pin_released = vmstat_value("nr_foll_pin_released");
}

static inline bool stress_counters_zero(const struct stress_counters *c, long ctx_own,
					long tl_own)
{
	return c->ctx_user == ctx_own && c->tl_user == tl_own && c->ev_user == 0 &&
	       c->fences_user == 0 && c->ctx_debugfs == ctx_own && c->tl_debugfs == tl_own &&
	       c->tl_live_fences == 0 && c->sim_queues <= 0 &&
	       c->pin_acquired == c->pin_released;
}

/*
 * Wait up to @ms for every counter to return to zero (except @ctx_own
 * contexts and @tl_own timelines the caller still holds), then report one
 * subtest "@name" with the figures.
 */
static inline bool stress_check_zero(const char *name, long ctx_own, long tl_own, int ms)
{
	struct stress_counters c;
	int64_t end = now_ns() + ms * MS_NS;
	bool ok;

	for (;;) {
		stress_counters_read(&c);
		ok = stress_counters_zero(&c, ctx_own, tl_own);
		if (ok || now_ns() > end)
			break;
		sleep_ns(50 * MS_NS);
	}
	tap_diag("%s: contexts %ld/%ld timelines %ld/%ld (live fences %ld) events %ld "
		 "fences %ld sim queues %ld pins %ld/%ld", name, c.ctx_user, c.ctx_debugfs,
		 c.tl_user, c.tl_debugfs, c.tl_live_fences, c.ev_user, c.fences_user,
		 c.sim_queues, c.pin_acquired, c.pin_released);
	return tap_ok(ok, "%s", name);
}

/* Skip the whole program (exit 0) unless it runs as root where kfdsync is. */
static inline void stress_require_root(void)
{
	if (access(RAW_KFDSYNC_DEV, F_OK) || geteuid()) {
		printf("1..0 # SKIP needs root and %s (the guest)\n", RAW_KFDSYNC_DEV);
		exit(0);
	}
}

/* Let unprivileged users open the nodes (the guest is ours). */
static inline void nodes_for_everyone(void)
{
	chmod(RAW_KFDSYNC_DEV, 0666);
	chmod(KFDSYNC_TL_DEVICE, 0666);
}

/* The program's own path, for re-executing itself as a child. */
static inline const char *self_path(void)
{
	static char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return "/proc/self/exe";
	exe[n] = '\0';
	return exe;
}

#endif /* KFDSYNC_TESTS_STRESS_H */
