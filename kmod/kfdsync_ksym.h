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
 * Address of function @name of module @module (and its end, if @end), or
 * NULL if it cannot be found or, with IBT enforced, called indirectly.
 */
static inline void *kfdsync_ksym_lookup(const char *module, const char *name,
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
	if (!start)
		return NULL;

#ifdef CONFIG_X86_KERNEL_IBT
	/* An indirect call needs an intact ENDBR64 when IBT is enforced. */
	if (cpu_feature_enabled(X86_FEATURE_IBT)) {
		u32 insn;

		if (copy_from_kernel_nofault(&insn, (void *)start,
					     sizeof(insn)) ||
		    insn != 0xfa1e0ff3)
			return NULL;
	}
#endif
	return (void *)start;
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
