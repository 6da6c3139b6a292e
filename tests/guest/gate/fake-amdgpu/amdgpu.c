// SPDX-License-Identifier: GPL-2.0
/*
 * A fake amdgpu for kfdsync's gate tests (tests/guest/gate): a module named
 * amdgpu whose BTF and code have amdkfd's functions in one shape, chosen
 * when it is built (FAKE_SHAPE):
 *
 *   abi61	the ABI kfdsync calls 6.1, exactly
 *   abi616	Linux 6.16's: kfd_lookup_process_by_pasid() takes a second
 *		argument and writes through it unless it is NULL,
 *		kfd_signal_vm_fault_event() takes the process device (what
 *		ROCm's amdgpu-dkms brings to Debian 12's 6.1 kernel)
 *   abi71	Linux 7.1's: abi616, kfd_signal_event_interrupt() takes a
 *		fourth argument (signal_mailbox_updated), and
 *		kfd_signal_process_terminate_event() exists
 *   inlined	abi61, but kfd_set_event() does not call set_event()
 *   clone	abi61, plus a set_event.part.0 clone
 *   sites	abi61, but kfd_signal_event_interrupt() calls
 *		set_event_from_interrupt() at two places, not amdkfd's three
 *   nobtf	abi61, and the build removes its BTF
 *
 * Nothing here does anything: the functions exist to be judged, probed and
 * found. It never ships.
 */

#include <linux/module.h>
#include <linux/types.h>

#if defined(FAKE_SHAPE_abi616) || defined(FAKE_SHAPE_abi71)
#define FAKE_PDD	/* the process lookup and VM faults of 6.16 on */
#endif

struct file;
struct kfd_dev;
struct kfd_hsa_memory_exception_data;
struct kfd_node;
struct kfd_vm_fault_info;
struct mm_struct;
struct vm_area_struct;

struct kfd_event {
	u32 event_id;
	u64 event_age;
	bool signaled;
};

/* Where a process's signal slots are (the gate reads these members). */
struct kfd_signal_page {
	u64 *kernel_address;
	u64 __user *user_address;
	bool need_to_free_pages;
};

struct kfd_process {
	void *other[7];
	struct kfd_signal_page *signal_page;
};

/* A process's data for one device (its process member from 6.16 on). */
struct kfd_process_device {
	void *dev;
	struct kfd_process *process;
};

static struct kfd_process_device fake_pdd __used;

static struct kfd_event fake_event;
static struct kfd_process fake_process __used;

#ifdef FAKE_PDD
struct kfd_process *kfd_lookup_process_by_pasid(u32 pasid,
						struct kfd_process_device **pdd);
struct kfd_process *kfd_lookup_process_by_pasid(u32 pasid,
						struct kfd_process_device **pdd)
{
	if (pdd)
		*pdd = NULL;
	return NULL;
}
#else
struct kfd_process *kfd_lookup_process_by_pasid(u32 pasid);
struct kfd_process *kfd_lookup_process_by_pasid(u32 pasid)
{
	return NULL;
}
#endif

struct kfd_process *kfd_lookup_process_by_mm(const struct mm_struct *mm);
struct kfd_process *kfd_lookup_process_by_mm(const struct mm_struct *mm)
{
	return NULL;
}

void kfd_unref_process(struct kfd_process *p);
void kfd_unref_process(struct kfd_process *p)
{
}

static noinline void set_event(struct kfd_event *ev)
{
	WRITE_ONCE(ev->signaled, true);
}

#ifdef FAKE_SHAPE_clone
/* What GCC names a partly inlined function's outlined rest. */
static noinline void set_event_part(struct kfd_event *ev) __asm__("set_event.part.0");
static noinline void set_event_part(struct kfd_event *ev)
{
	WRITE_ONCE(ev->event_age, ev->event_age + 1);
}
#endif

int kfd_set_event(struct kfd_process *p, u32 event_id);
int kfd_set_event(struct kfd_process *p, u32 event_id)
{
	if (event_id != fake_event.event_id)
		return -EINVAL;
#ifdef FAKE_SHAPE_inlined
	WRITE_ONCE(fake_event.signaled, true);
#else
	set_event(&fake_event);
#endif
	return 0;
}

static int kfd_mmap(struct file *file, struct vm_area_struct *vma)
{
	return -ENODEV;
}

#ifdef FAKE_PDD
void kfd_signal_vm_fault_event(struct kfd_process_device *pdd,
			       struct kfd_vm_fault_info *info,
			       struct kfd_hsa_memory_exception_data *data);
void kfd_signal_vm_fault_event(struct kfd_process_device *pdd,
			       struct kfd_vm_fault_info *info,
			       struct kfd_hsa_memory_exception_data *data)
{
}

struct kfd_process_device *
kfd_get_process_device_data(struct kfd_node *node, struct kfd_process *p);
struct kfd_process_device *
kfd_get_process_device_data(struct kfd_node *node, struct kfd_process *p)
{
	return NULL;
}

void kfd_signal_reset_event(struct kfd_node *node);
void kfd_signal_reset_event(struct kfd_node *node)
{
}

void kfd_signal_poison_consumed_event(struct kfd_node *node, u32 pasid);
void kfd_signal_poison_consumed_event(struct kfd_node *node, u32 pasid)
{
}
#else
void kfd_signal_vm_fault_event(struct kfd_dev *dev, u32 pasid,
			       struct kfd_vm_fault_info *info);
void kfd_signal_vm_fault_event(struct kfd_dev *dev, u32 pasid,
			       struct kfd_vm_fault_info *info)
{
}

struct kfd_process_device *
kfd_get_process_device_data(struct kfd_dev *dev, struct kfd_process *p);
struct kfd_process_device *
kfd_get_process_device_data(struct kfd_dev *dev, struct kfd_process *p)
{
	return NULL;
}

void kfd_signal_reset_event(struct kfd_dev *dev);
void kfd_signal_reset_event(struct kfd_dev *dev)
{
}

void kfd_signal_poison_consumed_event(struct kfd_dev *dev, u32 pasid);
void kfd_signal_poison_consumed_event(struct kfd_dev *dev, u32 pasid)
{
}
#endif

static noinline void set_event_from_interrupt(struct kfd_process *p,
					      struct kfd_event *ev)
{
	set_event(ev);
}

#ifdef FAKE_SHAPE_abi71
void kfd_signal_event_interrupt(u32 pasid, u32 partial_id, u32 valid_id_bits,
				bool signal_mailbox_updated);
void kfd_signal_event_interrupt(u32 pasid, u32 partial_id, u32 valid_id_bits,
				bool signal_mailbox_updated)
#else
void kfd_signal_event_interrupt(u32 pasid, u32 partial_id, u32 valid_id_bits);
void kfd_signal_event_interrupt(u32 pasid, u32 partial_id, u32 valid_id_bits)
#endif
{
	/* amdkfd's three call sites: the exact id, then its two scans. */
	if (partial_id == fake_event.event_id) {
		set_event_from_interrupt(NULL, &fake_event);
		return;
	}
	barrier();
	if (valid_id_bits >= 12)
		set_event_from_interrupt(&fake_process, &fake_event);
	barrier();
#ifndef FAKE_SHAPE_sites
	if (valid_id_bits == 1)
		set_event_from_interrupt(NULL, NULL);
#endif
}

void kfd_signal_hw_exception_event(u32 pasid);
void kfd_signal_hw_exception_event(u32 pasid)
{
}

int kfd_event_destroy(struct kfd_process *p, u32 event_id);
int kfd_event_destroy(struct kfd_process *p, u32 event_id)
{
	return -EINVAL;
}

void kfd_event_free_process(struct kfd_process *p);
void kfd_event_free_process(struct kfd_process *p)
{
}

#ifdef FAKE_SHAPE_abi71
void kfd_signal_process_terminate_event(struct kfd_process *p);
void kfd_signal_process_terminate_event(struct kfd_process *p)
{
}
#endif

/* Keep every function out of line and in the BTF. */
static void *const fake_amdgpu_fns[] __used = {
	kfd_lookup_process_by_pasid, kfd_lookup_process_by_mm,
	kfd_unref_process, kfd_set_event, kfd_mmap,
	kfd_get_process_device_data, set_event, set_event_from_interrupt,
	kfd_signal_event_interrupt, kfd_signal_hw_exception_event,
	kfd_event_destroy, kfd_event_free_process, kfd_signal_vm_fault_event,
	kfd_signal_reset_event, kfd_signal_poison_consumed_event,
#ifdef FAKE_SHAPE_clone
	set_event_part,
#endif
#ifdef FAKE_SHAPE_abi71
	kfd_signal_process_terminate_event,
#endif
};

MODULE_DESCRIPTION("kfdsync test: a fake amdgpu whose amdkfd does nothing");
MODULE_LICENSE("GPL");
