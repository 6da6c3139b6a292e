/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: access to amdkfd (inside amdgpu.ko), the bottom of the module.
 *
 * Everything kfdsync knows about amdkfd's internals is behind this header:
 * the gate (which amdkfd ABI the loaded amdgpu has, kfdsync_abi.h), the
 * functions it calls and the kprobes ("hooks") it places. The layer above registers &struct
 * kfdsync_amdkfd_ops and is called back from the hooks; it never sees a
 * kprobe or an amdkfd symbol.
 *
 * amdkfd objects are opaque here: a "kp" is a struct kfd_process pointer,
 * a "kdev" a struct kfd_dev (ABI 6.1) or kfd_node (ABI 6.12 on) pointer.
 */

#ifndef KFDSYNC_AMDKFD_H
#define KFDSYNC_AMDKFD_H

#include <linux/types.h>

struct dentry;
struct kfdsync_amdkfd_abi;
struct mm_struct;

/* An unsignalled slot (amdkfd's UNSIGNALED_EVENT_SLOT). */
#define KFDSYNC_SLOT_UNSIGNALLED	(~0ULL)

/**
 * struct kfdsync_amdkfd_ops - what the hooks report
 * @gpu_ack:	amdkfd is about to acknowledge the slot of event @id of
 *		process @kp and set the event (a GPU signal): the slot is
 *		read and counted now.
 * @gpu_unwritten: an interrupt of process @kp says the GPU signalled
 *		event @id without writing its slot (ABI 7.1's
 *		signal_mailbox_updated == false): one signal, whatever the
 *		slot holds; amdkfd sets the event right after.
 * @cpu_set:	amdkfd set event @id of the process whose address space is
 *		@mm from the CPU (kfd_set_event()); called inside amdkfd's
 *		event lock.
 * @event_destroy: amdkfd destroys event @id of @kp (the id may be reused).
 * @process_free: amdkfd frees the events and the signal page of @kp.
 *		After this returns, nothing may read @kp's slots.
 * @process_error: a hardware exception or RAS poison (-EIO) or a GPU
 *		memory fault (-EFAULT) hit @kp, or its GPU is unplugged
 *		(-ENODEV); @kp is referenced during the call.
 * @device_reset: GPU @kdev was reset; use kfdsync_amdkfd_process_uses().
 * @gone:	amdgpu is going (after its exit ran): every amdkfd event is
 *		gone, whether or not the hooks were attached. May sleep.
 *
 * Every callback but @gone runs in the hooked function's context with
 * preemption disabled: no sleeping, spinlocks only.
 */
struct kfdsync_amdkfd_ops {
	void (*gpu_ack)(const void *kp, u32 id);
	void (*gpu_unwritten)(const void *kp, u32 id);
	void (*cpu_set)(const struct mm_struct *mm, u32 id);
	void (*event_destroy)(const void *kp, u32 id);
	void (*process_free)(const void *kp);
	void (*process_error)(const void *kp, int error);
	void (*device_reset)(const void *kdev);
	void (*gone)(void);
};

/**
 * struct kfdsync_amdkfd_state - a snapshot of kfdsync's view of amdkfd
 * @present:	amdgpu.ko is loaded.
 * @active:	Every hook is attached: signals are counted in the kernel
 *		(%KFDSYNC_SOURCE_HOOKS); otherwise userspace relays them.
 * @hooks:	KFDSYNC_HOOK_* bits attached.
 * @reason:	KFDSYNC_RELAY_* code: why @active is false, 0 when it is not.
 * @missed:	Hook hits the kernel's kprobe core missed (recursion): each
 *		may be a lost signal.
 * @detail:	Human-readable reason, for INFO and the kernel log.
 */
struct kfdsync_amdkfd_state {
	bool present;
	bool active;
	u32 hooks;
	u32 reason;
	u64 missed;
	char detail[64];
};

int kfdsync_amdkfd_init(const struct kfdsync_amdkfd_ops *ops, bool enable,
			bool assume_unverified, const char *fail_hook,
			struct dentry *debugfs_root);
void kfdsync_amdkfd_exit(void);
void kfdsync_amdkfd_state(struct kfdsync_amdkfd_state *state);
bool kfdsync_amdkfd_active(void);
void kfdsync_amdkfd_abi(struct kfdsync_amdkfd_abi *abi);
void kfdsync_amdkfd_abi_names(char *buf, size_t size);
u32 kfdsync_amdkfd_supported(void);

void *kfdsync_amdkfd_process_get(const struct mm_struct *mm);
void kfdsync_amdkfd_process_put(void *kp);
bool kfdsync_amdkfd_process_uses(const struct mm_struct *mm, const void *kp,
				 const void *kdev);
u64 *kfdsync_amdkfd_slot(const void *kp, u32 id);
bool kfdsync_amdkfd_kprobes_fire(void);
int kfdsync_amdkfd_set_event(const struct mm_struct *mm, u32 id, bool check);

#endif /* KFDSYNC_AMDKFD_H */
