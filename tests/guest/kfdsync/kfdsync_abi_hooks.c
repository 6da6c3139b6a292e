// SPDX-License-Identifier: MIT
/*
 * kfdsync_abi_hooks: what the hooks of amdkfd's 7.1 ABI do to fences,
 * tried on every kernel.
 *
 * No GPU here raises them: gfx 12.1's end-of-pipe interrupt, which tells
 * amdkfd that the GPU signalled an event without writing its slot
 * (kfd_signal_event_interrupt()'s signal_mailbox_updated false), and a
 * GPU's hot-unplug (kfd_signal_process_terminate_event()). The hooks pass
 * them to the slot layer; debugfs inject ("unwritten ID", "terminate")
 * passes them the same way for the writer's own amdkfd process, on every
 * kernel and ABI. Which calls count as unwritten is the host test's
 * (tests/btf, unwritten_*); that the hooks attach on 7.1's amdgpu is
 * kfdsync_gate's (the fake in shape abi71, and Debian's 7.2).
 *
 * What must hold: an unwritten signal counts once, never more, whatever
 * the slot holds; a write the slot held is taken with it, and amdkfd's
 * acknowledgment of that write (an interrupt that follows, here through
 * the GPU simulator where it reaches amdkfd) counts nothing more; an
 * unplug ends the process's fences with -ENODEV, never as signalled; and
 * none of it reaches an event of another process or an id not registered.
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include "sim_test.h"
#include "kfdsync_hardening.h"

#define SLOT_UNSIGNALLED	(~0ULL)
/* What kfdsync leaves in a slot whose write it counted (kfdsync_slot.c). */
#define SLOT_COUNTED		(~1ULL)

static int inject_unwritten(uint32_t id)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "unwritten %u", id);
	return kfdsync_inject(cmd);
}

static void slot_write(const HsaEvent *ev, uint64_t value)
{
	__atomic_store_n((uint64_t *)(uintptr_t)slot_addr(ev), value, __ATOMIC_SEQ_CST);
}

/*
 * An unwritten signal signals the next fence, once; the slot, which the
 * GPU did not write, is left alone (kfdsync never writes a slot that reads
 * all-ones: amdkfd would take it for a write).
 */
TEST(unwritten_counts_once)
{
	HsaEvent *ev = registered_event();
	uint32_t id = ev->EventId;
	int f0 = raw_export(kfdsync, id, 0, 0), f1;

	tap_ret(inject_unwritten(id), 0, "unwritten_injected");
	tap_ok(raw_wait(f0, WAIT_MS) && raw_fence_status(f0) == 1, "unwritten_signals_fence");
	usleep(20000);
	f1 = raw_export(kfdsync, id, 1, 0);
	tap_ok(raw_age(kfdsync, id) == 1 && raw_fence_status(f1) == 0,
	       "unwritten_counted_once (age %llu, next fence %d)",
	       (unsigned long long)raw_age(kfdsync, id), raw_fence_status(f1));
	tap_ok(slot_of(ev) == SLOT_UNSIGNALLED, "unwritten_slot_untouched (%#llx)",
	       (unsigned long long)slot_of(ev));
	tap_ret(inject_unwritten(id), 0, "unwritten_again_injected");
	tap_ok(raw_wait(f1, WAIT_MS) && raw_fence_status(f1) == 1 && raw_age(kfdsync, id) == 2,
	       "unwritten_each_interrupt_one_signal (age %llu)",
	       (unsigned long long)raw_age(kfdsync, id));
	close(f0);
	close(f1);
	raw_unregister(kfdsync, id);
	hsaKmtDestroyEvent(ev);
}

/*
 * A write the slot holds when an unwritten signal comes is taken with it:
 * one signal for both, as amdkfd sets the event once and acknowledges the
 * slot. Then amdkfd's own acknowledgment of that slot (an interrupt naming
 * the id, the slot still marked) must not count it again: that would
 * signal the next fence before its work.
 */
TEST(unwritten_takes_pending_write)
{
	HsaEvent *ev = registered_event(), *other = new_event();
	uint32_t id = ev->EventId;
	uint64_t end;
	int f1;

	slot_write(ev, 42);
	tap_ret(inject_unwritten(id), 0, "pending_write_unwritten_injected");
	usleep(20000);
	f1 = raw_export(kfdsync, id, 1, 0);
	tap_ok(raw_age(kfdsync, id) == 1 && raw_fence_status(f1) == 0,
	       "pending_write_and_unwritten_one_signal (age %llu)",
	       (unsigned long long)raw_age(kfdsync, id));
	tap_ok(slot_of(ev) == SLOT_COUNTED, "pending_write_marked_counted (%#llx)",
	       (unsigned long long)slot_of(ev));
	if (getenv("KFDSYNC_SIM_UNUSABLE")) {
		tap_skip(getenv("KFDSYNC_SIM_UNUSABLE"), "pending_write_ack_not_counted_again");
		tap_skip(getenv("KFDSYNC_SIM_UNUSABLE"), "pending_write_acknowledged_by_amdkfd");
	} else {
		if (sim < 0)
			hardening_sim();
		/* Another slot written; the interrupt names ours, which reads set. */
		end = gpu_write(queue, other, id);
		queue_done(queue, end);
		usleep(50000);
		tap_ok(raw_age(kfdsync, id) == 1 && raw_fence_status(f1) == 0,
		       "pending_write_ack_not_counted_again (age %llu)",
		       (unsigned long long)raw_age(kfdsync, id));
		tap_ok(slot_of(ev) == SLOT_UNSIGNALLED, "pending_write_acknowledged_by_amdkfd (%#llx)",
		       (unsigned long long)slot_of(ev));
	}
	slot_write(ev, SLOT_UNSIGNALLED);
	close(f1);
	raw_unregister(kfdsync, id);
	hsaKmtWaitOnEvent(ev, 0);
	hsaKmtDestroyEvent(ev);
	hsaKmtDestroyEvent(other);
}

/* Only the writer's own registered id: nothing else moves; bad input is refused. */
TEST(unwritten_foreign_and_bad)
{
	HsaEvent *ev = registered_event(), *unwatched = new_event();
	uint32_t id = ev->EventId;
	pid_t pid;

	tap_ret(inject_unwritten(unwatched->EventId), 0, "unwritten_unregistered_id_accepted");
	tap_ret(inject_unwritten(4096), -EINVAL, "unwritten_id_beyond_page_refused");
	tap_ret(kfdsync_inject("unwritten x"), -EINVAL, "unwritten_garbage_refused");
	tap_ret(kfdsync_inject("unwritten "), -EINVAL, "unwritten_no_id_refused");
	tap_ret(kfdsync_inject("terminatex"), -EINVAL, "terminate_garbage_refused");
	/* A child has an address space of its own, and no amdkfd process. */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid)
		_exit(inject_unwritten(id) == -ESRCH && kfdsync_inject("terminate") == -ESRCH ?
		      0 : 1);
	tap_ok(reap(pid) == 0, "other_process_without_kfd_esrch");
	usleep(20000);
	tap_ok(raw_age(kfdsync, id) == 0, "foreign_injects_signal_nothing (age %llu)",
	       (unsigned long long)raw_age(kfdsync, id));
	raw_unregister(kfdsync, id);
	hsaKmtDestroyEvent(ev);
	hsaKmtDestroyEvent(unwatched);
}

/*
 * An unplugged GPU: amdkfd sets every signal event without a slot write
 * and sends SIGBUS. kfdsync's fences end with -ENODEV, never signalled,
 * and a CPU set after it does not bring them back.
 */
TEST(terminate_ends_fences_enodev)
{
	HsaEvent *ev = registered_event();
	uint32_t id = ev->EventId;
	int f0 = raw_export(kfdsync, id, 0, 0);

	tap_ret(kfdsync_inject("terminate"), 0, "terminate_injected");
	tap_ok(raw_wait(f0, WAIT_MS), "terminate_fence_ends");
	tap_ret(raw_fence_status(f0), -ENODEV, "terminate_fence_enodev");
	hsaKmtSetEvent(ev);
	usleep(20000);
	tap_ret(raw_fence_status(f0), -ENODEV, "terminate_fence_stays_ended");
	close(f0);
	raw_unregister(kfdsync, id);
	hsaKmtWaitOnEvent(ev, 0);
	hsaKmtDestroyEvent(ev);
}

int main(int argc, char **argv)
{
	harness_require = hardening_require;
	harness_setup = hardening_setup;
	return harness_main(argc, argv);
}
