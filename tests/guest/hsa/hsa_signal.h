/* SPDX-License-Identifier: MIT */
/*
 * What the files of hsa_signal share: ROCr initialised once for the whole
 * program, a kfdsync context, a simulated queue, the signals whose ROCr
 * async handlers must outlive their tests, and helpers. The definitions of
 * the globals are in hsa_signal.c.
 *
 * Some tests belong to one mode: HOOKS_MODE_ONLY() and RELAY_MODE_ONLY()
 * make them report nothing in the other (they are not skipped: the other
 * mode's run has its own tests for the same behaviour).
 */
#ifndef KFDSYNC_TESTS_HSA_SIGNAL_H
#define KFDSYNC_TESTS_HSA_SIGNAL_H

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <hsa/hsa.h>
#include <kfdsync_hsa.h>
#include <linux/sync_file.h>

#include "harness.h"
#include "sim_test.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MS		1000000LL

extern struct kfdsync_ctx *ctx;
/* Signals with a ROCr async handler (kfdsync_hsa.h): destroyed at the end. */
extern hsa_signal_t armed[16];
extern unsigned int n_armed;
extern int sim;
extern uint32_t queue;
/* kfdsync loaded with hooks=0 (hsa_signal_relay runs hsa_signal so). */
extern bool relay_mode;

#define HOOKS_MODE_ONLY()						\
	do {								\
		if (relay_mode) {					\
			tap_diag("hooks mode only: not run in relay mode"); \
			return;						\
		}							\
	} while (0)

#define RELAY_MODE_ONLY()						\
	do {								\
		if (!relay_mode) {					\
			tap_diag("relay mode only: not run in hooks mode"); \
			return;						\
		}							\
	} while (0)

/* ---- helpers ---- */

static inline uint64_t event_age(uint32_t id)
{
	struct kfdsync_event_state st;

	if (kfdsync_event_get_state(ctx, id, &st))
		return UINT64_MAX;
	return st.age;
}

/* Wait until the event's age reaches @age; false after @ms. */
static inline bool wait_age_ms(uint32_t id, uint64_t age, int ms)
{
	int64_t end = kfdsim_now_ns() + (int64_t)ms * MS;

	while (event_age(id) < age) {
		if (kfdsim_now_ns() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static inline bool wait_age(uint32_t id, uint64_t age)
{
	return wait_age_ms(id, age, WAIT_MS);
}

/* 1 signalled, 0 pending, <0 error status (SYNC_IOC_FILE_INFO). */
static inline int fence_status(int fd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000;
	return info.status;
}

static inline bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static inline hsa_signal_t signal_new(hsa_signal_value_t value)
{
	hsa_signal_t s;

	if (hsa_signal_create(value, 0, NULL, &s) != HSA_STATUS_SUCCESS)
		tap_bail("hsa_signal_create failed");
	return s;
}

static inline struct kfdsync_hsa_signal describe(hsa_signal_t s)
{
	struct kfdsync_hsa_signal sig;

	if (kfdsync_hsa_signal_describe(s, &sig))
		tap_bail("signal %#" PRIx64 " is not an interrupt signal", s.handle);
	return sig;
}

struct store {
	hsa_signal_t s;
	hsa_signal_value_t value;
};

static inline void *store_main(void *arg)
{
	struct store *st = arg;

	hsa_signal_store_screlease(st->s, st->value);
	return NULL;
}

/* Store @value from another thread and wait for the store. */
static inline bool store_from_thread(hsa_signal_t s, hsa_signal_value_t value)
{
	struct store st = { .s = s, .value = value };
	pthread_t t;

	if (pthread_create(&t, NULL, store_main, &st))
		return false;
	pthread_join(t, NULL);
	return true;
}

/*
 * Store @value from another thread until a store has set the signal's
 * event (ROCr sets it only once its event thread waits on the signal, see
 * kfdsync_hsa.h), so that kfdsync has checked the value since.
 */
static inline bool store_until_hint(hsa_signal_t s, hsa_signal_value_t value)
{
	struct kfdsync_hsa_signal sig = describe(s);
	int64_t end = kfdsim_now_ns() + (int64_t)WAIT_MS * MS;

	do {
		uint64_t age = event_age(sig.event_id);

		if (!store_from_thread(s, value))
			return false;
		if (wait_age_ms(sig.event_id, age + 1, 100))
			return true;
	} while (kfdsim_now_ns() < end);
	return false;
}

/* 1 signalled, 0 pending, else the fence's error. */
static inline int fence_error(int fd)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = { .num_fences = 1, .sync_fence_info = (uintptr_t)&fi };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000;
	return fi.status;
}

/* 1 signalled, 0 pending, else the fence's error; after at most @ms. */
static inline int fence_end(int fd, int ms)
{
	readable(fd, ms);
	return fence_error(fd);
}

/*
 * A simulated GPU completion: write the signal's next value, then the
 * event id to the mailbox, and raise the interrupt.
 */
static inline uint64_t gpu_complete(const struct kfdsync_hsa_signal *sig, int64_t value)
{
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	pm4_sim_delay(&b, 1000);
	pm4_release_mem(&b, (uint64_t)(uintptr_t)sig->value, (uint64_t)value,
			PM4_RELEASE_MEM_DATA_64, PM4_RELEASE_MEM_INT_NONE, 0);
	pm4_release_mem_event(&b, sig->mailbox, sig->event_id);
	if (b.overflow)
		tap_bail("PM4 buffer overflow");
	return submit(sim, queue, &b);
}

/* The four conditions: a value that does not satisfy one, then one that does. */
static const struct {
	const char *name;
	hsa_signal_condition_t cond;
	hsa_signal_value_t compare, initial, no, yes;
} cases[] = {
	{ "eq", HSA_SIGNAL_CONDITION_EQ, 0, 1, 5, 0 },
	{ "ne", HSA_SIGNAL_CONDITION_NE, 3, 3, 3, 4 },
	{ "lt", HSA_SIGNAL_CONDITION_LT, 1, 2, 1, -1 },	/* signed: -1 < 1 */
	{ "gte", HSA_SIGNAL_CONDITION_GTE, 100, 1, 99, 100 },
};

#endif /* KFDSYNC_TESTS_HSA_SIGNAL_H */
