// SPDX-License-Identifier: MIT
/*
 * sim_events - amdkfd's event code driven by the GPU simulator.
 *
 * The program uses only libhsakmt for events (create, wait, wait on many with
 * any/all and timeouts); they are signalled by simulated RELEASE_MEM packets
 * through amdkfd's real interrupt path (kfd_signal_event_interrupt). Each
 * check that a wait returned "after the packet ran" reads the simulator's own
 * completion record after the wake-up: the simulator records a RELEASE_MEM as
 * complete before it raises the interrupt, so a wake-up before the packet
 * ran would show up as an incomplete record. No check relies on a sleep.
 */
#include <pthread.h>

#include "sim_test.h"

#define NR_QUEUES	8
#define PLAN		30

static int sim = -1;

/* Wait returned SUCCESS and the queue's record covers @end (one more irq). */
static bool completed_before_wake(uint32_t q, uint64_t end, uint64_t irqs_before)
{
	struct kfdsim_queue_status st = queue_status(sim, q);
	bool ok = st.completed >= end && st.interrupts >= irqs_before + 1 &&
		  st.last_irq_pos >= end && st.last_irq_ns <= (uint64_t)kfdsim_now_ns();

	if (!ok)
		diag_status("queue", &st);
	return ok;
}

static void test_single_event(uint32_t q)
{
	HsaEvent *ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	uint64_t end, irqs = queue_status(sim, q).interrupts;
	HSAKMT_STATUS s;

	if (!ev)
		tap_bail("hsaKmtCreateEvent failed");
	tap_ok(hsaKmtWaitOnEvent(ev, 0) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "event_unsignalled_before_submit");

	/* Some "work", then the end-of-pipe signal, as a compute queue would. */
	pm4_sim_delay(&b, 50000);
	pm4_release_mem_event(&b, slot_addr(ev), ev->EventId);
	end = submit(sim, q, &b);
	s = hsaKmtWaitOnEvent(ev, WAIT_MS);
	tap_ok(s == HSAKMT_STATUS_SUCCESS, "event_signalled_by_release_mem (status %d)", s);
	tap_ok(completed_before_wake(q, end, irqs), "event_wait_returns_after_packet_ran");
	tap_ok(slot_of(ev) == UNSIGNALED_SLOT, "event_slot_acknowledged (slot %#" PRIx64 ")",
	       slot_of(ev));
	tap_ok(hsaKmtWaitOnEvent(ev, 0) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "event_auto_reset_consumed");

	/* 32-bit data, interrupt only after the write: low dword = id. */
	pm4_reset(&b);
	pm4_release_mem(&b, slot_addr(ev), ev->EventId, PM4_RELEASE_MEM_DATA_32,
			PM4_RELEASE_MEM_INT_AFTER_WRITE, ev->EventId);
	irqs = queue_status(sim, q).interrupts;
	end = submit(sim, q, &b);
	s = hsaKmtWaitOnEvent(ev, WAIT_MS);
	tap_ok(s == HSAKMT_STATUS_SUCCESS && completed_before_wake(q, end, irqs) &&
	       slot_of(ev) == UNSIGNALED_SLOT, "event_release_mem_32bit");

	/*
	 * A write without an interrupt signals nothing (amdkfd only looks when
	 * interrupted); the next interrupt finds the slot and sets the event.
	 */
	pm4_reset(&b);
	pm4_release_mem(&b, slot_addr(ev), ev->EventId, PM4_RELEASE_MEM_DATA_64,
			PM4_RELEASE_MEM_INT_NONE, 0);
	end = submit(sim, q, &b);
	tap_ok(kfdsim_queue_wait(sim, q, end, WAIT_MS) == 0 && slot_of(ev) == ev->EventId &&
	       hsaKmtWaitOnEvent(ev, 0) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "event_write_without_interrupt_not_signalled");
	pm4_reset(&b);
	pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE, PM4_RELEASE_MEM_INT_ONLY,
			ev->EventId);
	irqs = queue_status(sim, q).interrupts;
	end = submit(sim, q, &b);
	s = hsaKmtWaitOnEvent(ev, WAIT_MS);
	tap_ok(s == HSAKMT_STATUS_SUCCESS && completed_before_wake(q, end, irqs) &&
	       slot_of(ev) == UNSIGNALED_SLOT, "event_interrupt_only_finds_written_slot");

	hsaKmtDestroyEvent(ev);
}

static void test_wait_multiple(uint32_t qa, uint32_t qb)
{
	HsaEvent *ev[2] = {
		create_event(HSA_EVENTTYPE_SIGNAL, false),
		create_event(HSA_EVENTTYPE_SIGNAL, false),
	};
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	volatile uint32_t gate = 0;
	uint64_t end_a, end_b, irqs_a, irqs_b;
	struct kfdsim_queue_status st;
	HSAKMT_STATUS s;

	if (!ev[0] || !ev[1])
		tap_bail("hsaKmtCreateEvent failed");

	tap_ok(hsaKmtWaitOnMultipleEvents(ev, 2, false, 20) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "wait_any_times_out");
	tap_ok(hsaKmtWaitOnMultipleEvents(ev, 2, true, 0) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "wait_all_times_out");

	/* Wait all: two queues, different amounts of work. */
	irqs_a = queue_status(sim, qa).interrupts;
	irqs_b = queue_status(sim, qb).interrupts;
	pm4_sim_delay(&b, 20000);
	pm4_release_mem_event(&b, slot_addr(ev[0]), ev[0]->EventId);
	end_a = submit(sim, qa, &b);
	pm4_reset(&b);
	pm4_sim_delay(&b, 80000);
	pm4_release_mem_event(&b, slot_addr(ev[1]), ev[1]->EventId);
	end_b = submit(sim, qb, &b);
	s = hsaKmtWaitOnMultipleEvents(ev, 2, true, WAIT_MS);
	tap_ok(s == HSAKMT_STATUS_SUCCESS && completed_before_wake(qa, end_a, irqs_a) &&
	       completed_before_wake(qb, end_b, irqs_b), "wait_all_returns_after_both_packets");

	/*
	 * Wait any: queue B is held at a gate (WAIT_REG_MEM on memory the test
	 * owns), so only A can have signalled when the wait returns.
	 */
	irqs_a = queue_status(sim, qa).interrupts;
	irqs_b = queue_status(sim, qb).interrupts;
	pm4_reset(&b);
	pm4_wait_reg_mem(&b, (uintptr_t)&gate, PM4_WAIT_EQ, 1, 0xffffffff);
	pm4_release_mem_event(&b, slot_addr(ev[1]), ev[1]->EventId);
	end_b = submit(sim, qb, &b);
	pm4_reset(&b);
	pm4_release_mem_event(&b, slot_addr(ev[0]), ev[0]->EventId);
	end_a = submit(sim, qa, &b);
	s = hsaKmtWaitOnMultipleEvents(ev, 2, false, WAIT_MS);
	st = queue_status(sim, qb);
	tap_ok(s == HSAKMT_STATUS_SUCCESS && completed_before_wake(qa, end_a, irqs_a) &&
	       st.completed < end_b && st.interrupts == irqs_b,
	       "wait_any_returns_for_the_queue_that_ran");
	tap_ok(hsaKmtWaitOnEvent(ev[1], 0) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "wait_any_other_event_unsignalled");

	/* Open the gate from the CPU; B's WAIT_REG_MEM sees it by polling. */
	__atomic_store_n(&gate, 1, __ATOMIC_SEQ_CST);
	s = hsaKmtWaitOnEvent(ev[1], WAIT_MS);
	tap_ok(s == HSAKMT_STATUS_SUCCESS && completed_before_wake(qb, end_b, irqs_b),
	       "wait_reg_mem_sees_cpu_write");

	hsaKmtDestroyEvent(ev[0]);
	hsaKmtDestroyEvent(ev[1]);
}

/*
 * N queues, N events: wait-any until all completed. Manual-reset events, so
 * that after each wake-up the test can see which ones are set without
 * consuming them; every set event must belong to a queue whose record shows
 * its RELEASE_MEM complete.
 */
static void test_multi_queue(void)
{
	HsaEvent *ev[NR_QUEUES], *pending[NR_QUEUES];
	uint32_t q[NR_QUEUES], owner[NR_QUEUES];
	uint64_t end[NR_QUEUES];
	unsigned int i, n_pending = NR_QUEUES, wakeups = 0, misattributed = 0, done = 0;
	bool seen[NR_QUEUES] = { false };
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	for (i = 0; i < NR_QUEUES; i++) {
		ev[i] = create_event(HSA_EVENTTYPE_SIGNAL, true);
		if (!ev[i])
			tap_bail("hsaKmtCreateEvent failed");
		q[i] = queue_create(sim);
	}
	/* Reverse order of work: the last queue finishes first. */
	for (i = 0; i < NR_QUEUES; i++) {
		pm4_reset(&b);
		pm4_sim_delay(&b, (NR_QUEUES - i) * 15000);
		pm4_release_mem_event(&b, slot_addr(ev[i]), ev[i]->EventId);
		end[i] = submit(sim, q[i], &b);
		pending[i] = ev[i];
		owner[i] = i;
	}

	while (n_pending && wakeups < 4 * NR_QUEUES) {
		HSAKMT_STATUS s = hsaKmtWaitOnMultipleEvents(pending, n_pending, false, WAIT_MS);
		unsigned int j = 0, k;

		wakeups++;
		if (s != HSAKMT_STATUS_SUCCESS) {
			tap_diag("wait-any returned %d with %u pending", s, n_pending);
			break;
		}
		for (k = 0; k < n_pending; k++) {
			unsigned int idx = owner[k];

			if (hsaKmtWaitOnEvent(pending[k], 0) != HSAKMT_STATUS_SUCCESS) {
				pending[j] = pending[k];
				owner[j++] = idx;
				continue;
			}
			/* Set: its queue, and only its queue, must have run it. */
			if (queue_status(sim, q[idx]).completed < end[idx] || seen[idx])
				misattributed++;
			seen[idx] = true;
			done++;
			hsaKmtResetEvent(pending[k]);
		}
		n_pending = j;
	}
	tap_ok(done == NR_QUEUES && !n_pending, "multi_queue_all_completed (%u wakeups)", wakeups);
	tap_ok(!misattributed, "multi_queue_each_completion_attributed (%u wrong)", misattributed);
	for (i = 0, done = 0; i < NR_QUEUES; i++) {
		struct kfdsim_queue_status st = queue_status(sim, q[i]);

		done += st.interrupts == 1 && st.last_irq_pos == end[i] &&
			slot_of(ev[i]) == UNSIGNALED_SLOT;
	}
	tap_ok(done == NR_QUEUES, "multi_queue_one_interrupt_each_slots_acknowledged");

	for (i = 0; i < NR_QUEUES; i++) {
		hsaKmtDestroyEvent(ev[i]);
		kfdsim_queue_destroy(sim, q[i]);
	}
}

/* Queue B blocks in WAIT_REG_MEM until queue A's RELEASE_MEM writes the value. */
static void test_cross_queue(uint32_t qa, uint32_t qb)
{
	HsaEvent *ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	struct {
		uint32_t flag;
		uint32_t pad;
		uint64_t t_a;		/* A: timestamp before writing the flag */
		uint64_t t_b;		/* B: timestamp after its wait */
		uint32_t result;
	} volatile mem = { 0 };
	uint32_t dw[64];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct kfdsim_queue_status st;
	uint64_t end_a, end_b, wait_end;
	HSAKMT_STATUS s;

	if (!ev)
		tap_bail("hsaKmtCreateEvent failed");

	pm4_wait_reg_mem(&b, (uintptr_t)&mem.flag, PM4_WAIT_EQ, 1, 0xffffffff);
	wait_end = queue_status(sim, qb).submitted + b.len;
	pm4_release_mem(&b, (uintptr_t)&mem.t_b, 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
			PM4_RELEASE_MEM_INT_NONE, 0);
	pm4_write_data32(&b, (uintptr_t)&mem.result, 2);
	pm4_release_mem_event(&b, slot_addr(ev), ev->EventId);
	end_b = submit(sim, qb, &b);

	tap_ok(wait_until_executing(sim, qb, PM4_OP_WAIT_REG_MEM, WAIT_MS),
	       "cross_queue_b_blocks_in_wait_reg_mem");
	st = queue_status(sim, qb);
	tap_ok(st.completed < wait_end && st.state == KFDSIM_QUEUE_RUNNING && !mem.result &&
	       hsaKmtWaitOnEvent(ev, 0) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "cross_queue_b_does_not_proceed_alone");

	pm4_reset(&b);
	pm4_release_mem(&b, (uintptr_t)&mem.t_a, 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
			PM4_RELEASE_MEM_INT_NONE, 0);
	pm4_release_mem(&b, (uintptr_t)&mem.flag, 1, PM4_RELEASE_MEM_DATA_32,
			PM4_RELEASE_MEM_INT_NONE, 0);
	end_a = submit(sim, qa, &b);
	s = hsaKmtWaitOnEvent(ev, WAIT_MS);
	st = queue_status(sim, qb);
	tap_ok(s == HSAKMT_STATUS_SUCCESS && st.completed >= end_b && mem.result == 2 &&
	       queue_status(sim, qa).completed >= end_a,
	       "cross_queue_b_proceeds_after_a_writes");
	tap_ok(mem.t_a && mem.t_b && mem.t_a <= mem.t_b,
	       "cross_queue_a_wrote_before_b_went_on (t_a %" PRIu64 " t_b %" PRIu64 ")",
	       (uint64_t)mem.t_a, (uint64_t)mem.t_b);
	hsaKmtDestroyEvent(ev);
}

struct waiter {
	HsaEvent *ev;
	HSAKMT_STATUS status;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	w->status = hsaKmtWaitOnEvent(w->ev, WAIT_MS);
	return NULL;
}

static void test_hw_exception(void)
{
	HsaEvent *exc = create_event(HSA_EVENTTYPE_HW_EXCEPTION, false);
	uint32_t qe = queue_create(sim), qg = queue_create(sim);
	volatile uint32_t gate = 0;
	struct kfdsim_queue_status st;
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct waiter w;
	pthread_t thr;
	uint64_t end;
	int ret;

	if (!tap_ok(exc != NULL, "hw_exception_event_create")) {
		tap_skip_rest(tap_count + 3, "no HW_EXCEPTION event");
		return;
	}

	/* In-order exception packet, behind a gate another queue opens. */
	pm4_wait_reg_mem(&b, (uintptr_t)&gate, PM4_WAIT_EQ, 1, 0xffffffff);
	pm4_sim_hw_exception(&b);
	end = submit(sim, qe, &b);
	pm4_reset(&b);
	pm4_sim_delay(&b, 30000);
	pm4_write_data32(&b, (uintptr_t)&gate, 1);
	submit(sim, qg, &b);
	ret = (int)hsaKmtWaitOnEvent(exc, WAIT_MS);
	st = queue_status(sim, qe);
	tap_ok(ret == HSAKMT_STATUS_SUCCESS && st.state == KFDSIM_QUEUE_ERROR &&
	       st.error == -EIO && st.error_pos == end - 3,
	       "hw_exception_packet_wakes_exception_event");
	if (st.state != KFDSIM_QUEUE_ERROR)
		diag_status("exception queue", &st);

	/* Injected on a queue: a waiter in another thread wakes. */
	kfdsim_queue_destroy(sim, qe);
	qe = queue_create(sim);
	w.ev = exc;
	w.status = HSAKMT_STATUS_ERROR;
	pthread_create(&thr, NULL, wait_thread, &w);
	ret = kfdsim_inject(sim, qe, KFDSIM_INJECT_HW_EXCEPTION);
	pthread_join(thr, NULL);
	st = queue_status(sim, qe);
	/* The waiter may have started after the set: auto-reset keeps it set. */
	tap_ok(!ret && w.status == HSAKMT_STATUS_SUCCESS && st.state == KFDSIM_QUEUE_ERROR &&
	       st.error == -EIO, "hw_exception_inject_wakes_waiter (inject %d, wait %d)", ret,
	       w.status);
	tap_ok(kfdsim_submit_buf(sim, qe, &b, NULL) == -EIO, "hw_exception_queue_refuses_work");

	kfdsim_queue_destroy(sim, qe);
	kfdsim_queue_destroy(sim, qg);
	hsaKmtDestroyEvent(exc);
}

int main(void)
{
	struct kfdsim_info info;
	uint32_t qa, qb, pasid = 0, baseline;
	int ret;

	require_sim_guest();
	require_sim_interrupts();
	scrub_hsa_env();
	tap_plan(PLAN);

	if (!tap_ok(hsaKmtOpenKFD() == HSAKMT_STATUS_SUCCESS, "kfd_open"))
		tap_bail("hsaKmtOpenKFD failed");
	sim = kfdsim_open();
	if (!tap_ok(sim >= 0, "sim_open"))
		tap_bail("%s: %s", KFDSIM_DEVICE, strerror(-sim));
	ret = kfdsim_info(sim, &info);
	tap_ok(!ret && info.abi_version == KFDSIM_ABI_VERSION, "sim_info_abi");
	baseline = info.live_queues;

	ret = kfdsim_queue_create(sim, 0, &qa, &pasid);
	tap_ok(!ret && pasid && pasid == sysfs_pasid(),
	       "queue_create_takes_owner_pasid (pasid %u, sysfs %u)", pasid, sysfs_pasid());
	if (ret)
		tap_bail("kfdsim_queue_create: %s", strerror(-ret));
	qb = queue_create(sim);

	test_single_event(qa);
	test_wait_multiple(qa, qb);
	test_multi_queue();
	test_cross_queue(qa, qb);
	test_hw_exception();

	tap_ok(!kfdsim_queue_destroy(sim, qa) && !kfdsim_queue_destroy(sim, qb) &&
	       live_queues(sim) == baseline, "queues_destroyed_none_left");
	close(sim);
	hsaKmtCloseKFD();
	return tap_exit();
}
