// SPDX-License-Identifier: MIT
/*
 * kfd_events - proves the guest rig: amdgpu's CPU-only /dev/kfd is present
 * and unmodified libhsakmt can open it and create, set and wait on events.
 *
 * Everything later in kfdsync stands on these facts (../../../shared notes,
 * kfd.md); when a kernel or libhsakmt update breaks one, this fails first.
 */
#include <hsakmt.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

#define UNSIGNALED_SLOT UINT64_MAX
#define FIRST_NONSIGNAL_EVENT_ID 0x40000000u

static HsaEvent *create_event(HSA_EVENTTYPE type, bool manual_reset)
{
	HsaEventDescriptor desc = { .EventType = type, .NodeId = 0 };
	HsaEvent *ev = NULL;

	if (hsaKmtCreateEvent(&desc, manual_reset, false, &ev) != HSAKMT_STATUS_SUCCESS)
		return NULL;
	return ev;
}

static uint64_t slot_of(const HsaEvent *ev)
{
	return *(volatile uint64_t *)(uintptr_t)ev->EventData.HWData2;
}

int main(void)
{
	HsaSystemProperties props = { 0 };
	HsaEvent *sig, *sig2, *mem, *both[2];
	struct stat st;
	bool st_ok;

	tap_skip_program_if("KFDSYNC_KFD_UNUSABLE");
	tap_plan(12);
	/* libhsakmt honours these; a stray one (e.g. a bad
	 * HSA_OVERRIDE_GFX_VERSION) makes hsaKmtOpenKFD fail. */
	clearenv();

	if (!tap_ok(stat("/dev/kfd", &st) == 0 && S_ISCHR(st.st_mode), "kfd_node_present"))
		tap_bail("no /dev/kfd: is amdgpu loaded?");
	if (!tap_ok(hsaKmtOpenKFD() == HSAKMT_STATUS_SUCCESS, "kfd_open"))
		tap_bail("hsaKmtOpenKFD failed");
	st_ok = hsaKmtAcquireSystemProperties(&props) == HSAKMT_STATUS_SUCCESS;
	tap_ok(st_ok && props.NumNodes == 1, "topology_cpu_only_node (NumNodes=%u)",
	       props.NumNodes);

	sig = create_event(HSA_EVENTTYPE_SIGNAL, false);
	sig2 = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!tap_ok(sig && sig2, "event_create_signal"))
		tap_bail("cannot create signal events");
	tap_diag("signal events %u and %u, slot %#llx", sig->EventId, sig2->EventId,
		 (unsigned long long)sig->EventData.HWData2);
	/* Signal event ids are slot indexes, 0 is reserved. */
	tap_ok(sig->EventId >= 1 && sig->EventId < FIRST_NONSIGNAL_EVENT_ID &&
	       sig2->EventId != sig->EventId && sig->EventData.HWData1 == sig->EventId,
	       "event_signal_id_is_slot");
	tap_ok(sig->EventData.HWData2 && slot_of(sig) == UNSIGNALED_SLOT,
	       "event_signal_slot_unsignalled");

	mem = create_event(HSA_EVENTTYPE_MEMORY, true);
	tap_ok(mem && mem->EventId >= FIRST_NONSIGNAL_EVENT_ID, "event_create_memory (id %#x)",
	       mem ? mem->EventId : 0);

	tap_ok(hsaKmtWaitOnEvent(sig, 0) == HSAKMT_STATUS_WAIT_TIMEOUT, "wait_unsignalled_times_out");
	tap_ok(hsaKmtWaitOnEvent(sig, 10) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "wait_unsignalled_times_out_10ms");
	tap_ok(hsaKmtSetEvent(sig) == HSAKMT_STATUS_SUCCESS &&
	       hsaKmtWaitOnEvent(sig, 1000) == HSAKMT_STATUS_SUCCESS, "set_then_wait_succeeds");

	/* Auto-reset: the wait consumed the signal. */
	tap_ok(hsaKmtWaitOnEvent(sig, 0) == HSAKMT_STATUS_WAIT_TIMEOUT, "auto_reset_consumed");

	both[0] = sig;
	both[1] = sig2;
	tap_ok(hsaKmtSetEvent(sig2) == HSAKMT_STATUS_SUCCESS &&
	       hsaKmtWaitOnMultipleEvents(both, 2, false, 1000) == HSAKMT_STATUS_SUCCESS &&
	       hsaKmtWaitOnMultipleEvents(both, 2, false, 0) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "wait_any_wakes_on_second");

	hsaKmtDestroyEvent(sig);
	hsaKmtDestroyEvent(sig2);
	if (mem)
		hsaKmtDestroyEvent(mem);
	hsaKmtReleaseSystemProperties();
	hsaKmtCloseKFD();
	return tap_exit();
}
