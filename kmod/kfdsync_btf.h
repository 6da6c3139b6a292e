/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kfdsync: a reader of BTF, the kernel's type format
 * (Documentation/bpf/btf.rst), just enough to tell amdkfd's ABI from the
 * BTF the loaded amdgpu.ko carries.
 *
 * A leaf: no kernel API beyond memory allocation, so that the same file
 * builds into kfdsync.ko and into a host unit test (tests/btf), which
 * feeds it the real BTF of Debian's kernels and mutations of it.
 *
 * A module's BTF is "split": its type ids and string offsets continue
 * those of the kernel's own BTF (vmlinux), its base.
 */

#ifndef KFDSYNC_BTF_H
#define KFDSYNC_BTF_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kfdsync_host.h"	/* tests/btf: the kernel's types on the host */
#endif

#include <linux/btf.h>

/**
 * struct kfdsync_btf - one parsed BTF blob
 * @base:	The blob this one continues (split BTF), or NULL.
 * @types:	Its type section.
 * @strs:	Its string section, NUL terminated.
 * @types_len:	Size of @types in bytes.
 * @strs_len:	Size of @strs in bytes.
 * @first_id:	Type id of its first type: 1, or the one after its base's
 *		last.
 * @nr_types:	Number of types in it.
 * @str_start:	String offset of @strs[0]: 0, or the base's end.
 * @offsets:	Offset in @types of each of its types.
 *
 * The blob itself is not copied: it must outlive the struct.
 */
struct kfdsync_btf {
	const struct kfdsync_btf *base;
	const u8 *types;
	const char *strs;
	u32 types_len;
	u32 strs_len;
	u32 first_id;
	u32 nr_types;
	u32 str_start;
	u32 *offsets;
};

/* Longest type kfdsync_btf_render() writes, NUL included. */
#define KFDSYNC_BTF_TYPE_LEN	96

int kfdsync_btf_init(struct kfdsync_btf *btf, const void *data, size_t size,
		     const struct kfdsync_btf *base, const char **why);
void kfdsync_btf_fini(struct kfdsync_btf *btf);
const struct btf_type *kfdsync_btf_type(const struct kfdsync_btf *btf,
					u32 id);
const char *kfdsync_btf_name(const struct kfdsync_btf *btf, u32 off);
u32 kfdsync_btf_find(const struct kfdsync_btf *btf, unsigned int kind,
		     const char *name, unsigned int *count);
int kfdsync_btf_render(const struct kfdsync_btf *btf, u32 id, char *buf,
		       size_t size);
int kfdsync_btf_render_args(const struct kfdsync_btf *btf, u32 proto,
			    char *buf, size_t size, unsigned int *nr_args);

#endif /* KFDSYNC_BTF_H */
