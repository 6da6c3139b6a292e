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
 * KFDSYNC_CALL(function, return type, argument types...):
 *	kfdsync calls it, the same in every ABI.
 * KFDSYNC_CALL_6_1(...), KFDSYNC_CALL_6_12(...):
 *	kfdsync calls it, as it is in that ABI.
 * KFDSYNC_PROBE(...), KFDSYNC_PROBE_6_1(...), KFDSYNC_PROBE_6_12(...):
 *	a hook probes it (or kfdsync reads its code).
 * KFDSYNC_FIELD(struct, member, type, bit offset):
 *	a structure fact kfdsync relies on: the member at that offset.
 * KFDSYNC_FIELD_READ(struct, member, type, name):
 *	a member kfdsync reads where the BTF says it is: any offset aligned
 *	for its type, the same in every definition of the structure; the
 *	verdict records it as KFDSYNC_ABI_OFF_<name>.
 *
 * ABI "6.1": a GPU is a struct kfd_dev. ABI "6.12": a GPU (or a partition
 * of one) is a struct kfd_node, and a VM fault carries its data. In both,
 * the vm_fault and poison hooks read the pasid from argument 1 and the
 * reset hook the device from argument 0, which kfdsync passes to
 * kfd_get_process_device_data(); the GPU hook reads the event id through
 * its struct kfd_event pointer.
 *
 * A process's signal slots are found through amdkfd's own state, for the
 * kernel page and a GPU buffer alike: struct kfd_process's signal_page
 * points to a struct kfd_signal_page whose kernel_address is amdkfd's
 * kernel mapping of the page, an array of u64 slots indexed by event id.
 */

#ifndef KFDSYNC_CALL
#define KFDSYNC_CALL(...)
#endif
#ifndef KFDSYNC_CALL_6_1
#define KFDSYNC_CALL_6_1(...)
#endif
#ifndef KFDSYNC_CALL_6_12
#define KFDSYNC_CALL_6_12(...)
#endif
#ifndef KFDSYNC_PROBE
#define KFDSYNC_PROBE(...)
#endif
#ifndef KFDSYNC_PROBE_6_1
#define KFDSYNC_PROBE_6_1(...)
#endif
#ifndef KFDSYNC_PROBE_6_12
#define KFDSYNC_PROBE_6_12(...)
#endif
#ifndef KFDSYNC_FIELD
#define KFDSYNC_FIELD(...)
#endif
#ifndef KFDSYNC_FIELD_READ
#define KFDSYNC_FIELD_READ(...)
#endif

KFDSYNC_CALL(kfd_lookup_process_by_pasid, struct kfd_process *, unsigned int)
KFDSYNC_CALL(kfd_lookup_process_by_mm, struct kfd_process *,
	     const struct mm_struct *)
KFDSYNC_CALL(kfd_unref_process, void, struct kfd_process *)
KFDSYNC_CALL(kfd_set_event, int, struct kfd_process *, unsigned int)
KFDSYNC_CALL_6_1(kfd_get_process_device_data, struct kfd_process_device *,
		 struct kfd_dev *, struct kfd_process *)
KFDSYNC_CALL_6_12(kfd_get_process_device_data, struct kfd_process_device *,
		  struct kfd_node *, struct kfd_process *)

KFDSYNC_PROBE(set_event_from_interrupt, void, struct kfd_process *,
	      struct kfd_event *)
KFDSYNC_PROBE(set_event, void, struct kfd_event *)
/* Not probed: its code is read for its calls of set_event_from_interrupt. */
KFDSYNC_PROBE(kfd_signal_event_interrupt, void, unsigned int, unsigned int,
	      unsigned int)
KFDSYNC_PROBE(kfd_signal_hw_exception_event, void, unsigned int)
KFDSYNC_PROBE(kfd_event_destroy, int, struct kfd_process *, unsigned int)
KFDSYNC_PROBE(kfd_event_free_process, void, struct kfd_process *)
KFDSYNC_PROBE_6_1(kfd_signal_vm_fault_event, void, struct kfd_dev *,
		  unsigned int,
		  struct kfd_vm_fault_info *)
KFDSYNC_PROBE_6_1(kfd_signal_reset_event, void, struct kfd_dev *)
KFDSYNC_PROBE_6_1(kfd_signal_poison_consumed_event, void, struct kfd_dev *,
		  unsigned int)
KFDSYNC_PROBE_6_12(kfd_signal_vm_fault_event, void, struct kfd_node *,
		   unsigned int,
		   struct kfd_vm_fault_info *,
		   struct kfd_hsa_memory_exception_data *)
KFDSYNC_PROBE_6_12(kfd_signal_reset_event, void, struct kfd_node *)
KFDSYNC_PROBE_6_12(kfd_signal_poison_consumed_event, void, struct kfd_node *,
		   unsigned int)

KFDSYNC_FIELD(kfd_event, event_id, unsigned int, 0)
KFDSYNC_FIELD_READ(kfd_process, signal_page, struct kfd_signal_page *,
		   SIGNAL_PAGE)
KFDSYNC_FIELD_READ(kfd_signal_page, kernel_address, long long unsigned int *,
		   KERNEL_ADDRESS)

#undef KFDSYNC_CALL
#undef KFDSYNC_CALL_6_1
#undef KFDSYNC_CALL_6_12
#undef KFDSYNC_PROBE
#undef KFDSYNC_PROBE_6_1
#undef KFDSYNC_PROBE_6_12
#undef KFDSYNC_FIELD
#undef KFDSYNC_FIELD_READ
