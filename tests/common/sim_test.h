/* SPDX-License-Identifier: MIT */
/*
 * Helpers for guest tests that drive amdkfd through the GPU simulator
 * (sim/): events, queues, PM4 submission. Naming as in the house style:
 * __helper() returns -errno, helper() bails out of the test.
 */
#ifndef KFDSYNC_TESTS_SIM_TEST_H
#define KFDSYNC_TESTS_SIM_TEST_H

#include <hsakmt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kfdsim.h"
#include "tap.h"

#define UNSIGNALED_SLOT		UINT64_MAX
#define WAIT_MS			10000	/* generous: the guest runs under TCG */

/* Drop HSA_* variables: libhsakmt honours them and a stray one breaks it. */
static inline void scrub_hsa_env(void)
{
	extern char **environ;
	char name[256];
	size_t i = 0;

	while (environ && environ[i]) {
		const char *eq = strchr(environ[i], '=');
		size_t n = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);

		if (!strncmp(environ[i], "HSA_", 4) && n < sizeof(name)) {
			memcpy(name, environ[i], n);
			name[n] = '\0';
			unsetenv(name);
			continue;	/* environ shifted down */
		}
		i++;
	}
}

/*
 * Outside the test guest (no KFDSYNC_VM), skip the whole program when there is
 * no /dev/kfd or /dev/kfdsim; inside it, their absence is a failure.
 */
static inline void require_sim_guest(void)
{
	const char *vm = getenv("KFDSYNC_VM");
	struct stat st;

	tap_skip_program_if("KFDSYNC_KFD_UNUSABLE");
	if (!stat("/dev/kfd", &st) && !stat(KFDSIM_DEVICE, &st))
		return;
	if (vm && !strcmp(vm, "1")) {
		printf("TAP version 13\n1..1\n");
		tap_bail("no /dev/kfd or %s in the guest: amdgpu or kfdsim not loaded",
			 KFDSIM_DEVICE);
	}
	printf("TAP version 13\n1..0 # SKIP needs /dev/kfd and %s (run in the guest)\n",
	       KFDSIM_DEVICE);
	exit(0);
}

/*
 * For programs that are all about the GPU simulator: skip the whole program
 * where it cannot reach amdkfd's interrupt path (the runner sets
 * KFDSYNC_SIM_UNUSABLE, to the reason, on amdkfd 6.16 and later, whose
 * processes without a GPU have no pasid).
 */
static inline void require_sim_interrupts(void)
{
	tap_skip_program_if("KFDSYNC_SIM_UNUSABLE");
}

static inline HsaEvent *create_event(HSA_EVENTTYPE type, bool manual_reset)
{
	HsaEventDescriptor desc = { .EventType = type, .NodeId = 0 };
	HsaEvent *ev = NULL;

	if (hsaKmtCreateEvent(&desc, manual_reset, false, &ev) != HSAKMT_STATUS_SUCCESS)
		return NULL;
	return ev;
}

static inline uint64_t slot_addr(const HsaEvent *ev)
{
	return ev->EventData.HWData2;
}

static inline uint64_t slot_of(const HsaEvent *ev)
{
	return *(volatile uint64_t *)(uintptr_t)slot_addr(ev);
}

/* The caller's pasid as amdkfd's sysfs shows it, or 0. */
static inline uint32_t sysfs_pasid(void)
{
	char path[64];
	unsigned int pasid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/kfd/kfd/proc/%d/pasid", (int)getpid());
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &pasid) != 1)
		pasid = 0;
	fclose(f);
	return pasid;
}

static inline uint32_t queue_create(int fd)
{
	uint32_t q;
	int ret = kfdsim_queue_create(fd, 0, &q, NULL);

	/*
	 * No pasid (amdkfd 6.16+ without a GPU): the rest cannot run. (A
	 * program that creates queues in forked children skips up front,
	 * with require_sim_interrupts().)
	 */
	if (ret == -ESRCH)
		tap_skip_rest_if("KFDSYNC_SIM_UNUSABLE");
	if (ret)
		tap_bail("kfdsim_queue_create: %s", strerror(-ret));
	return q;
}

static inline uint64_t submit(int fd, uint32_t q, const struct pm4_buf *b)
{
	uint64_t end = 0;
	int ret = kfdsim_submit_buf(fd, q, b, &end);

	if (ret)
		tap_bail("kfdsim_submit_buf: %s", strerror(-ret));
	return end;
}

static inline struct kfdsim_queue_status queue_status(int fd, uint32_t q)
{
	struct kfdsim_queue_status st;
	int ret = kfdsim_queue_status(fd, q, &st);

	if (ret)
		tap_bail("kfdsim_queue_status: %s", strerror(-ret));
	return st;
}

static inline void diag_status(const char *what, const struct kfdsim_queue_status *st)
{
	tap_diag("%s: state %s error %d submitted %" PRIu64 " completed %" PRIu64
		 " packets %" PRIu64 " irqs %" PRIu64 " exec %#x@%" PRIu64
		 " error_header %#x@%" PRIu64, what, kfdsim_state_name(st->state), st->error,
		 (uint64_t)st->submitted, (uint64_t)st->completed, (uint64_t)st->packets,
		 (uint64_t)st->interrupts, st->exec_header, (uint64_t)st->exec_pos,
		 st->error_header, (uint64_t)st->error_pos);
}

/*
 * Poll until the queue is executing a packet with @opcode (e.g. blocked in
 * WAIT_REG_MEM). This observes the simulator's own record; the sleep only
 * paces the polling. Returns false after @timeout_ms.
 */
static inline bool wait_until_executing(int fd, uint32_t q, uint32_t opcode, int timeout_ms)
{
	int64_t end = kfdsim_now_ns() + (int64_t)timeout_ms * 1000000;

	do {
		struct kfdsim_queue_status st = queue_status(fd, q);

		if (st.exec_header && ((st.exec_header >> 8) & 0xff) == opcode)
			return true;
		usleep(1000);
	} while (kfdsim_now_ns() < end);
	return false;
}

static inline uint32_t live_queues(int fd)
{
	struct kfdsim_info info;

	if (kfdsim_info(fd, &info))
		tap_bail("kfdsim_info failed");
	return info.live_queues;
}

#endif /* KFDSYNC_TESTS_SIM_TEST_H */
