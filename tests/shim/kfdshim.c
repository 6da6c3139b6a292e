// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdshim: lets a CPU-only process into amdkfd 7.0-7.2 (test only).
 *
 * DOC: Overview
 *
 * From 7.0 (the GPU hot-unplug change) to 7.2, kfd_create_process() refuses
 * every process while amdkfd has no GPU node: "if (kfd_gpu_node_num() <= 0)"
 * (7.2.12: drivers/gpu/drm/amd/amdkfd/kfd_process.c:948), so open("/dev/kfd")
 * fails with EINVAL in a guest without an AMD GPU. In 7.2's sources and in
 * Debian's 7.2 amdgpu.ko that check is the only caller of kfd_gpu_node_num()
 * (one relocation against it, in kfd_create_process()).
 *
 * This module puts a kretprobe on kfd_gpu_node_num() and, when the function
 * returns 0 to kfd_create_process(), makes the answer 1. Any other caller and
 * any other answer is left as it is, and nothing else of amdkfd changes: the
 * process is then created by amdkfd's own code, with no device, and its
 * signal events live on the kernel-allocated signal page as on 6.16-6.19.
 * 7.3 removed that page, so the shim does not help there.
 *
 * The probe follows amdgpu: armed when amdgpu comes (or at load if it is
 * there), disarmed when it goes. The read-only parameter "overrides" counts
 * the answers changed. Loaded only by the test rig (tests/shim/with-shim),
 * never installed.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>

#define KFDSHIM_TARGET "kfd_gpu_node_num"
#define KFDSHIM_CALLER "kfd_create_process"

static atomic_t kfdshim_overrides = ATOMIC_INIT(0);

static int kfdshim_overrides_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&kfdshim_overrides));
}

static const struct kernel_param_ops kfdshim_overrides_ops = {
	.get = kfdshim_overrides_get,
};

module_param_cb(overrides, &kfdshim_overrides_ops, NULL, 0444);
MODULE_PARM_DESC(overrides, "How many times kfd_create_process() was told 1 instead of 0");

/* Is @addr inside kfd_create_process()? */
static bool kfdshim_in_caller(unsigned long addr)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t len = strlen(KFDSHIM_CALLER);

	sprint_symbol(buf, addr);
	return !strncmp(buf, KFDSHIM_CALLER, len) && buf[len] == '+';
}

static int kfdshim_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (regs_return_value(regs) != 0 ||
	    !kfdshim_in_caller(get_kretprobe_retaddr(ri)))
		return 0;
	regs_set_return_value(regs, 1);
	atomic_inc(&kfdshim_overrides);
	return 0;
}

static DEFINE_MUTEX(kfdshim_lock);	/* protects both below */
static struct kretprobe kfdshim_probe;
static bool kfdshim_armed;

/*
 * Probe kfd_gpu_node_num() of the amdgpu that is there (or coming). With
 * @quiet, amdgpu's absence is not worth a warning (the module notifier arms
 * the probe when amdgpu comes).
 */
static int kfdshim_arm(bool quiet)
{
	int ret = 0;

	mutex_lock(&kfdshim_lock);
	if (kfdshim_armed)
		goto out;
	/* A fresh probe each time amdgpu comes. */
	memset(&kfdshim_probe, 0, sizeof(kfdshim_probe));
	kfdshim_probe.kp.symbol_name = "amdgpu:" KFDSHIM_TARGET;
	kfdshim_probe.handler = kfdshim_ret;
	kfdshim_probe.maxactive = 8;
	ret = register_kretprobe(&kfdshim_probe);
	if (ret) {
		if (!quiet)
			pr_warn("cannot probe amdgpu:%s (%d): amdkfd keeps refusing processes without a GPU\n",
				KFDSHIM_TARGET, ret);
		goto out;
	}
	kfdshim_armed = true;
	pr_info("%s() answers 1 instead of 0 to %s()\n", KFDSHIM_TARGET,
		KFDSHIM_CALLER);
out:
	mutex_unlock(&kfdshim_lock);
	return ret;
}

static void kfdshim_disarm(void)
{
	mutex_lock(&kfdshim_lock);
	if (kfdshim_armed) {
		unregister_kretprobe(&kfdshim_probe);
		kfdshim_armed = false;
	}
	mutex_unlock(&kfdshim_lock);
}

static int kfdshim_module_event(struct notifier_block *nb, unsigned long action,
				void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, "amdgpu"))
		return NOTIFY_DONE;
	if (action == MODULE_STATE_COMING)
		kfdshim_arm(false);
	else if (action == MODULE_STATE_GOING)
		kfdshim_disarm();
	return NOTIFY_DONE;
}

static struct notifier_block kfdshim_module_nb = {
	.notifier_call = kfdshim_module_event,
};

static int __init kfdshim_init(void)
{
	int ret;

	ret = register_module_notifier(&kfdshim_module_nb);
	if (ret)
		return ret;
	/* amdgpu already loaded: arm now; else when it comes (above). */
	kfdshim_arm(true);
	return 0;
}

static void __exit kfdshim_exit(void)
{
	unregister_module_notifier(&kfdshim_module_nb);
	kfdshim_disarm();
}

module_init(kfdshim_init);
module_exit(kfdshim_exit);

MODULE_DESCRIPTION("Test only: kfd_gpu_node_num() answers 1 to kfd_create_process() on amdkfd 7.0-7.2 without a GPU");
MODULE_LICENSE("GPL");
