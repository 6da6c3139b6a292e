/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: finding amdgpu's unexported functions and amdgpu itself.
 *
 * Shared, as a header of inline functions, by kfdsync.ko (kfdsync_amdkfd.c)
 * and the test-only GPU simulator (kfdsim.ko), whose Kbuild adds this
 * directory to its include path.
 *
 * kallsyms_lookup_name() is not exported. A kprobe registered on
 * "module:function" resolves the symbol; its address, less the offset the
 * kprobe core may have added to skip an ENDBR, is the function.
 * kfdsync_ksym_find() finds any function; kfdsync_ksym_lookup() only one
 * that can be called through a pointer.
 */

#ifndef KFDSYNC_KSYM_H
#define KFDSYNC_KSYM_H

#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/*
 * The extent of function @name given an address inside it: its start, and
 * its end in *@end if @end. 0 if @addr is not in @name.
 */
static inline unsigned long kfdsync_ksym_extent(unsigned long addr,
						const char *name,
						unsigned long *end)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t len = strlen(name);
	unsigned long off, size;

	sprint_symbol(buf, addr);
	if (strncmp(buf, name, len) || buf[len] != '+')
		return 0;
	if (sscanf(buf + len, "+%lx/%lx", &off, &size) != 2 || off > addr)
		return 0;
	if (end)
		*end = addr - off + size;
	return addr - off;
}

/*
 * ENDBR64 (f3 0f 1e fa), as a little-endian u32: KFDSYNC_ABI_ENDBR64, here
 * too because this header stands alone (kfdsim.ko uses it).
 */
#define KFDSYNC_KSYM_ENDBR64	0xfa1e0ff3U

/*
 * Address of function @name of module @module (and its end, if @end), or
 * NULL if it cannot be found. Whatever its first instruction: for a
 * function that is probed, whose code is read, or that is called by a
 * direct branch (a static call), never through a pointer (static functions
 * that are only called directly have no ENDBR64, and module load seals the
 * ENDBR64 of functions whose address is never taken).
 */
static inline void *kfdsync_ksym_find(const char *module, const char *name,
				      unsigned long *end)
{
	char qualified[KSYM_NAME_LEN];
	struct kprobe kp = { .symbol_name = qualified };
	unsigned long start;

	snprintf(qualified, sizeof(qualified), "%s:%s", module, name);
	if (register_kprobe(&kp))
		return NULL;
	start = kfdsync_ksym_extent((unsigned long)kp.addr, name, end);
	unregister_kprobe(&kp);
	return (void *)start;
}

/* Whether IBT is enforced: an indirect call must land on an ENDBR64. */
static inline bool kfdsync_ksym_ibt(void)
{
#ifdef CONFIG_X86_KERNEL_IBT
	return cpu_feature_enabled(X86_FEATURE_IBT);
#else
	return false;
#endif
}

/* The first four bytes of the code at @start, or 0 if unreadable. */
static inline u32 kfdsync_ksym_insn(const void *start)
{
	u32 insn;

	if (copy_from_kernel_nofault(&insn, start, sizeof(insn)))
		return 0;
	return insn;
}

/*
 * As kfdsync_ksym_find(), for a function the caller calls through a
 * pointer: NULL also when IBT is enforced and it does not start with
 * ENDBR64 (the call would fault).
 */
static inline void *kfdsync_ksym_lookup(const char *module, const char *name,
					unsigned long *end)
{
	void *start = kfdsync_ksym_find(module, name, end);

	if (start && kfdsync_ksym_ibt() &&
	    kfdsync_ksym_insn(start) != KFDSYNC_KSYM_ENDBR64)
		return NULL;
	return start;
}

/*
 * Module @name with a reference that keeps it from unloading, or NULL when
 * it is not loaded or already going. Looks for its kobject in /sys/module
 * (the caller's own module's kset), which exists from just after the module
 * is COMING until it is freed; the kobject reference keeps the struct
 * module from being freed meanwhile.
 */
static inline struct module *kfdsync_ksym_module_get(const char *name)
{
	struct kset *modules = THIS_MODULE->mkobj.kobj.kset;
	struct kobject *kobj;
	struct module *mod;

	kobj = kset_find_obj(modules, name);
	if (!kobj)
		return NULL;
	mod = container_of(kobj, struct module_kobject, kobj)->mod;
	if (mod && !try_module_get(mod))
		mod = NULL;
	kobject_put(kobj);
	return mod;
}

#endif /* KFDSYNC_KSYM_H */
