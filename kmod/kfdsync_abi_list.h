/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kfdsync: the amdkfd ABIs kfdsync implements, as one list (kfdsync_abi.h).
 *
 * Included several times, with no include guard: the includer defines the
 * macros it wants before each inclusion, the others expand to nothing, and
 * all are undefined at the end. Types are spelled as kfdsync_btf_render()
 * renders BTF types; the order is the order the gate checks in (what
 * kfdsync calls before what it probes), so a verdict names the most
 * important difference first. tools/btf-fixtures reads the names here.
 *
 * KFDSYNC_ABI(id, name):
 *	an ABI, oldest first: KFDSYNC_ABI_ID_<id>, named after the first
 *	Debian kernel kfdsync was tested on with it.
 * KFDSYNC_CALL(abis, member, function, return type, argument types...):
 *	kfdsync calls it, in the ABIs @abis, through the static call
 *	kfdsync_kfd_@member of that very type (kfdsync_amdkfd.c).
 * KFDSYNC_PROBE(abis, function, return type, argument types...):
 *	a hook probes it (or kfdsync reads its code), in the ABIs @abis.
 * KFDSYNC_FIELD(abis, struct, member, type, bit offset):
 *	a structure fact kfdsync relies on: the member at that offset.
 * KFDSYNC_FIELD_READ(abis, struct, member, type, name):
 *	a member kfdsync reads where the BTF says it is: any offset aligned
 *	for its type, the same in every definition of the structure; the
 *	verdict records it as KFDSYNC_ABI_OFF_<name>.
 *
 * @abis is KFDSYNC_ALL, KFDSYNC_ONLY(id), KFDSYNC_FROM(id) (that ABI and
 * every later one) or KFDSYNC_UPTO(id) (that one and every earlier one).
 *
 * ABI "6.1": a GPU is a struct kfd_dev. "6.12": a GPU (or a partition of
 * one) is a struct kfd_node, and a VM fault carries its data. In both, the
 * vm_fault and poison hooks read the pasid from argument 1 and the reset
 * hook the device from argument 0, which kfdsync passes to
 * kfd_get_process_device_data(); the GPU hook reads the event id through
 * its struct kfd_event pointer.
 *
 * "6.16" (6.16 to 6.19, and AMD's newer amdgpu-dkms on any kernel):
 * pasids are per device, and the lookup by pasid takes a second argument,
 * where amdkfd stores the device data it found the pasid in; kfdsync
 * passes NULL, and amdkfd then stores nothing (6.18's kfd_process.c:1838;
 * every caller in kfd_events.c does so). A VM fault is reported with the
 * device data, whose member process is the process (the caller holds a
 * reference on it for the call).
 *
 * "7.1" (7.1, 7.2): "6.16" and two more things amdkfd does to signal
 * events. kfd_signal_event_interrupt() takes a fourth argument,
 * signal_mailbox_updated: false (gfx 12.1's end-of-pipe interrupt) makes
 * amdkfd set the event of a full id without reading its slot, which the
 * GPU did not write (7.2's kfd_events.c:174); the interrupt hook counts
 * such a signal, once per interrupt, where the GPU hook finds no write.
 * kfd_signal_process_terminate_event() (GPU hot-unplug) sets every signal
 * event of a process with no slot write: the work did not complete, and
 * the terminate hook ends the process's fences with -ENODEV. (7.0 has the
 * terminate event and the three-argument interrupt: it matches "6.16",
 * whose hooks do not see the terminate event; those fences end when amdkfd
 * kills the process, or at their watchdog.)
 *
 * A process's signal slots are found through amdkfd's own state, for the
 * kernel page and a GPU buffer alike: struct kfd_process's signal_page
 * points to a struct kfd_signal_page whose kernel_address is amdkfd's
 * kernel mapping of the page, an array of u64 slots indexed by event id.
 * (7.3 keeps only the array, a u64 * signal_page: no ABI here yet.)
 */

#ifndef KFDSYNC_ABI
#define KFDSYNC_ABI(...)
#endif
#ifndef KFDSYNC_CALL
#define KFDSYNC_CALL(...)
#endif
#ifndef KFDSYNC_PROBE
#define KFDSYNC_PROBE(...)
#endif
#ifndef KFDSYNC_FIELD
#define KFDSYNC_FIELD(...)
#endif
#ifndef KFDSYNC_FIELD_READ
#define KFDSYNC_FIELD_READ(...)
#endif

KFDSYNC_ABI(6_1, "6.1")
KFDSYNC_ABI(6_12, "6.12")
KFDSYNC_ABI(6_16, "6.16")
KFDSYNC_ABI(7_1, "7.1")

KFDSYNC_CALL(KFDSYNC_UPTO(6_12), lookup_pasid, kfd_lookup_process_by_pasid,
	     struct kfd_process *, unsigned int)
KFDSYNC_CALL(KFDSYNC_FROM(6_16), lookup_pasid_pdd, kfd_lookup_process_by_pasid,
	     struct kfd_process *, unsigned int, struct kfd_process_device **)
KFDSYNC_CALL(KFDSYNC_ALL, lookup_mm, kfd_lookup_process_by_mm,
	     struct kfd_process *, const struct mm_struct *)
KFDSYNC_CALL(KFDSYNC_ALL, unref, kfd_unref_process, void, struct kfd_process *)
KFDSYNC_CALL(KFDSYNC_ALL, set_event, kfd_set_event, int, struct kfd_process *,
	     unsigned int)
KFDSYNC_CALL(KFDSYNC_ONLY(6_1), pdd_of_dev, kfd_get_process_device_data,
	     struct kfd_process_device *, struct kfd_dev *, struct kfd_process *)
KFDSYNC_CALL(KFDSYNC_FROM(6_12), pdd_of_node, kfd_get_process_device_data,
	     struct kfd_process_device *, struct kfd_node *,
	     struct kfd_process *)

KFDSYNC_PROBE(KFDSYNC_ALL, set_event_from_interrupt, void,
	      struct kfd_process *, struct kfd_event *)
KFDSYNC_PROBE(KFDSYNC_ALL, set_event, void, struct kfd_event *)
/* Up to "6.16" not probed: its code is read for its calls of set_event_from_interrupt. */
KFDSYNC_PROBE(KFDSYNC_UPTO(6_16), kfd_signal_event_interrupt, void,
	      unsigned int, unsigned int, unsigned int)
KFDSYNC_PROBE(KFDSYNC_FROM(7_1), kfd_signal_event_interrupt, void,
	      unsigned int, unsigned int, unsigned int, bool)
KFDSYNC_PROBE(KFDSYNC_ALL, kfd_signal_hw_exception_event, void, unsigned int)
KFDSYNC_PROBE(KFDSYNC_ALL, kfd_event_destroy, int, struct kfd_process *,
	      unsigned int)
KFDSYNC_PROBE(KFDSYNC_ALL, kfd_event_free_process, void, struct kfd_process *)
KFDSYNC_PROBE(KFDSYNC_ONLY(6_1), kfd_signal_vm_fault_event, void,
	      struct kfd_dev *, unsigned int, struct kfd_vm_fault_info *)
KFDSYNC_PROBE(KFDSYNC_ONLY(6_12), kfd_signal_vm_fault_event, void,
	      struct kfd_node *, unsigned int, struct kfd_vm_fault_info *,
	      struct kfd_hsa_memory_exception_data *)
KFDSYNC_PROBE(KFDSYNC_FROM(6_16), kfd_signal_vm_fault_event, void,
	      struct kfd_process_device *, struct kfd_vm_fault_info *,
	      struct kfd_hsa_memory_exception_data *)
KFDSYNC_PROBE(KFDSYNC_ONLY(6_1), kfd_signal_reset_event, void,
	      struct kfd_dev *)
KFDSYNC_PROBE(KFDSYNC_FROM(6_12), kfd_signal_reset_event, void,
	      struct kfd_node *)
KFDSYNC_PROBE(KFDSYNC_ONLY(6_1), kfd_signal_poison_consumed_event, void,
	      struct kfd_dev *, unsigned int)
KFDSYNC_PROBE(KFDSYNC_FROM(6_12), kfd_signal_poison_consumed_event, void,
	      struct kfd_node *, unsigned int)
KFDSYNC_PROBE(KFDSYNC_FROM(7_1), kfd_signal_process_terminate_event, void,
	      struct kfd_process *)

KFDSYNC_FIELD(KFDSYNC_ALL, kfd_event, event_id, unsigned int, 0)
KFDSYNC_FIELD_READ(KFDSYNC_ALL, kfd_process, signal_page,
		   struct kfd_signal_page *, SIGNAL_PAGE)
KFDSYNC_FIELD_READ(KFDSYNC_ALL, kfd_signal_page, kernel_address,
		   unsigned long long *, KERNEL_ADDRESS)
KFDSYNC_FIELD_READ(KFDSYNC_FROM(6_16), kfd_process_device, process,
		   struct kfd_process *, PDD_PROCESS)

#undef KFDSYNC_ABI
#undef KFDSYNC_CALL
#undef KFDSYNC_PROBE
#undef KFDSYNC_FIELD
#undef KFDSYNC_FIELD_READ
