/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kfdsync: the amdkfd ABIs kfdsync implements, and the gate that tells from
 * BTF which one, if any, an amdgpu.ko has.
 *
 * kfdsync calls amdkfd functions through pointers it finds at run time and
 * reads the arguments of the functions it probes. That is safe only on the
 * exact prototypes it was written and tested for, and only the loaded
 * amdgpu's own BTF says which those are: not the kernel's version (ROCm's
 * amdgpu-dkms puts a years newer amdkfd on Debian 12's 6.1; distributions
 * backport DRM into older kernels).
 *
 * Each ABI is named after the first Debian kernel kfdsync was tested on
 * with it. What each one has is listed once, in kfdsync_abi_list.h, with
 * the types spelled as kfdsync_btf_render() renders BTF types: the list
 * gives the gate's expectation (kfdsync_abi.c, as text), and the compiler
 * checks that the pointers kfdsync calls amdkfd through have exactly the
 * listed types (kfdsync_amdkfd.c), so the two cannot drift apart, and a
 * kCFI kernel, which checks the prototype at every indirect call, sees the
 * one amdkfd defined.
 */

#ifndef KFDSYNC_ABI_H
#define KFDSYNC_ABI_H

#include "kfdsync_btf.h"

struct kfd_dev;
struct kfd_event;
struct kfd_hsa_memory_exception_data;
struct kfd_node;
struct kfd_process;
struct kfd_process_device;
struct kfd_vm_fault_info;
struct mm_struct;

/* The ABIs, oldest first, in the order of kfdsync_abis[]. */
enum kfdsync_abi_id {
#define KFDSYNC_ABI(id, name) KFDSYNC_ABI_ID_##id,
#include "kfdsync_abi_list.h"
	KFDSYNC_ABI_COUNT,
};

/* Sets of ABIs, as bit masks of enum kfdsync_abi_id (kfdsync_abi_list.h). */
#define KFDSYNC_ALL		((1U << KFDSYNC_ABI_COUNT) - 1)
#define KFDSYNC_ONLY(id)	(1U << KFDSYNC_ABI_ID_##id)
#define KFDSYNC_FROM(id)	(KFDSYNC_ALL & ~(KFDSYNC_ONLY(id) - 1))
#define KFDSYNC_UPTO(id)	((KFDSYNC_ONLY(id) << 1) - 1)

/* Whether the set @abis has the ABI @abi (an enum kfdsync_abi_id). */
static inline bool kfdsync_abi_in(u32 abis, int abi)
{
	return abis & (1U << abi);
}

/**
 * struct kfdsync_abi_fn - one function's prototype, as text
 * @name:	The function.
 * @ret:	Its return type.
 * @args:	Its argument types, separated by ", ".
 * @probed:	kfdsync probes it (or reads its code), rather than calls it.
 * @abis:	The ABIs that have it so (a set of enum kfdsync_abi_id bits).
 */
struct kfdsync_abi_fn {
	const char *name;
	const char *ret;
	const char *args;
	bool probed;
	u32 abis;
};

/* The members kfdsync reads at the offset the BTF gives (FIELD_READ). */
enum kfdsync_abi_off {
#define KFDSYNC_FIELD_READ(abis, st, mem, ty, name) KFDSYNC_ABI_OFF_##name,
#include "kfdsync_abi_list.h"
	KFDSYNC_ABI_OFFSETS,
};

/**
 * struct kfdsync_abi_field - one structure fact
 * @type:	The structure.
 * @member:	Its member.
 * @mtype:	The member's type, as text.
 * @bit:	The member's offset in bits (a fixed fact).
 * @read:	-1 for a fixed fact; else the member is wherever the BTF puts
 *		it (aligned for its type, the same in every definition) and
 *		its byte offset goes to &kfdsync_abi_verdict.off[@read].
 * @abis:	The ABIs that rely on it (enum kfdsync_abi_id bits).
 */
struct kfdsync_abi_field {
	const char *type;
	const char *member;
	const char *mtype;
	u32 bit;
	int read;
	u32 abis;
};

/**
 * struct kfdsync_abi - one amdkfd ABI kfdsync implements
 * @name:	Its name, for people.
 */
struct kfdsync_abi {
	const char *name;
};

extern const struct kfdsync_abi kfdsync_abis[KFDSYNC_ABI_COUNT];

/*
 * Every function and structure fact of every ABI; an ABI has those whose
 * set has its bit.
 */
extern const struct kfdsync_abi_fn kfdsync_abi_fns[];
extern const unsigned int kfdsync_abi_nr_fns;
extern const struct kfdsync_abi_field kfdsync_abi_fields[];
extern const unsigned int kfdsync_abi_nr_fields;

/* Size of &struct kfdsync_abi_verdict.reason (the uAPI's). */
#define KFDSYNC_ABI_REASON	192

/**
 * struct kfdsync_abi_verdict - what the gate found
 * @result:	KFDSYNC_AMDKFD_ABI_MATCH, _MISMATCH or _NO_BTF (uAPI).
 * @abi:	The ABI matched (MATCH) or the closest one (MISMATCH), an
 *		enum kfdsync_abi_id; -1 with NO_BTF.
 * @reason:	For MISMATCH the first difference from @abi, for NO_BTF
 *		what is wrong with the BTF, in words; "" for MATCH.
 * @off:	For MATCH, the byte offset of each member kfdsync reads
 *		(enum kfdsync_abi_off) in its structure.
 */
struct kfdsync_abi_verdict {
	u32 result;
	int abi;
	char reason[KFDSYNC_ABI_REASON];
	u32 off[KFDSYNC_ABI_OFFSETS];
};

/* ENDBR64 (f3 0f 1e fa) as a little-endian u32: an indirect branch target. */
#define KFDSYNC_ABI_ENDBR64	0xfa1e0ff3U
/*
 * What module load writes over a sealed ENDBR64 (x86's gen_endbr_poison()),
 * a 4-byte NOP: "osp nopl (%rax)" in 6.12, "nopl -42(%rax)" in 6.18 and 7.x.
 */
#define KFDSYNC_ABI_SEALED_6_12		0x001f0f66U
#define KFDSYNC_ABI_SEALED_6_18		0xd6401f0fU

const struct kfdsync_abi_fn *kfdsync_abi_fn(int abi, const char *name);
bool kfdsync_abi_signal_unwritten(u32 id, u32 valid_id_bits,
				  bool mailbox_updated);
void kfdsync_abi_check(const void *vmlinux, size_t vmlinux_size,
		       const void *module, size_t module_size,
		       struct kfdsync_abi_verdict *verdict);
#ifndef __KERNEL__
void kfdsync_abi_check_facts(const void *vmlinux, size_t vmlinux_size,
			     const void *module, size_t module_size, int abi,
			     struct kfdsync_abi_verdict *verdict);
#endif

#endif /* KFDSYNC_ABI_H */
