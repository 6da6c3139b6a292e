/* SPDX-License-Identifier: MIT */
/*
 * The set-up of the kfdsync_hardening_* programs: the holes of issue 12,
 * each tried the way an attacker (or an unlucky scheduler) would, against
 * kfdsync.ko in hooks mode.
 *
 * Each program opens /dev/kfd (libhsakmt) and /dev/kfdsync as root in the
 * guest (hardening_setup()), and the GPU simulator if it needs one
 * (hardening_sim()): simulated RELEASE_MEM packets go through amdkfd's
 * real interrupt path. Without kfdsync's hooks (relay mode, an unverified
 * amdkfd) the whole program skips.
 *
 * Include after sim_test.h. Naming as in the house style: helper() bails
 * out of the test on failure.
 */
#ifndef KFDSYNC_TESTS_KFDSYNC_HARDENING_H
#define KFDSYNC_TESTS_KFDSYNC_HARDENING_H

#include <sys/stat.h>

#include "child.h"
#include "harness.h"
#include "kfdsync_raw.h"
#include "kmod.h"
#include "kfdsync_test.h"

#define MS			1000000LL
#define NOBODY			65534

static int kfdsync = -1;
static int sim = -1;
static uint32_t queue;

static inline HsaEvent *registered_event(void)
{
	HsaEvent *ev = new_event();
	int ret = raw_register(kfdsync, ev->EventId, slot_addr(ev));

	if (ret)
		tap_bail("register %u: %s", ev->EventId, strerror(-ret));
	return ev;
}

/* Wait until the event's age is @age; false after @ms. */
static inline bool age_reaches(uint32_t id, uint64_t age, int ms)
{
	int64_t end = raw_now_ns() + ms * MS;

	while (raw_age(kfdsync, id) < age) {
		if (raw_now_ns() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static inline void queue_done(uint32_t q, uint64_t end)
{
	int ret = kfdsim_queue_wait(sim, q, end, WAIT_MS * 3);

	if (ret)
		tap_bail("queue %u did not complete: %s", q, strerror(-ret));
}

/* The GPU writes @ev's slot, with an interrupt naming @int_id (0: none). */
static inline uint64_t gpu_write(uint32_t q, HsaEvent *ev, uint32_t int_id)
{
	uint32_t dw[16];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	pm4_release_mem(&b, slot_addr(ev), ev->EventId, PM4_RELEASE_MEM_DATA_64,
			int_id ? PM4_RELEASE_MEM_INT_AFTER_WRITE : PM4_RELEASE_MEM_INT_NONE,
			int_id);
	return submit(sim, q, &b);
}

static inline int param_set(const char *name, unsigned int val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u", val);
	return kfdsync_param_write(name, buf);
}

/* Run @fn(@arg) in a child that drops to uid/gid @uid; its exit status. */
static inline int as_user(uid_t uid, int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(99);
		_exit(fn(arg));
	}
	return reap(pid);
}

/* Let an unprivileged child use kfdsync's nodes (the guest is ours). */
static inline void nodes_for_everyone(void)
{
	chmod(RAW_KFDSYNC_DEV, 0666);
	chmod(KFDSYNC_TL_DEVICE, 0666);
}

/* For harness_require: outside the guest, skip. */
static inline void hardening_require(void)
{
	scrub_hsa_env();
	require_sim_guest();
}

/* For harness_setup: /dev/kfd and a context of kfdsync with its hooks. */
static inline void hardening_setup(void)
{
	struct kfdsync_info info;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD failed");
	kfdsync = open_kfdsync();
	if (raw_info(kfdsync, &info) || info.hooks != info.hooks_supported)
		harness_skip_program("needs kfdsync with its hooks (hooks %#x)", info.hooks);
}

/* The GPU simulator and a queue of this process. */
static inline void hardening_sim(void)
{
	sim = kfdsim_open();
	if (sim < 0)
		tap_bail("kfdsim_open: %s", strerror(-sim));
	queue = queue_create(sim);
}

#endif /* KFDSYNC_TESTS_KFDSYNC_HARDENING_H */
