// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: the module parameters.
 *
 * hooks and assume_unverified cannot change at runtime (0444). The limits
 * may be changed through sysfs (0644): each write is checked against the
 * parameter's bounds (-ERANGE outside, -EINVAL for what is not a number),
 * and contexts and timelines take their limits when they are opened, so a
 * change only applies to those opened afterwards.
 */

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/module.h>

#include "kfdsync_params.h"

static bool kfdsync_hooks = true;
module_param_named(hooks, kfdsync_hooks, bool, 0444);
MODULE_PARM_DESC(hooks,
		 "Attach kprobes to amdkfd; N forces relay mode (default Y)");

static bool kfdsync_assume_unverified;
module_param_named(assume_unverified, kfdsync_assume_unverified, bool, 0444);
MODULE_PARM_DESC(assume_unverified,
		 "Attach no hook even to an amdgpu that passes the gate: relay mode (testing; default N)");

static char *kfdsync_fail_hook;
module_param_named(fail_hook, kfdsync_fail_hook, charp, 0444);
MODULE_PARM_DESC(fail_hook,
		 "Testing: make the named hook fail to attach, as on a kernel without it (default none)");

/**
 * struct kfdsync_param_range - an unsigned int parameter with bounds
 * @val: the value
 * @min: smallest accepted value
 * @max: largest accepted value
 */
struct kfdsync_param_range {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

static int kfdsync_param_range_set(const char *buf,
				   const struct kernel_param *kp)
{
	const struct kfdsync_param_range *range = kp->arg;
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 0, &val);
	if (ret)
		return ret;
	if (val < range->min || val > range->max)
		return -ERANGE;
	WRITE_ONCE(*range->val, val);
	return 0;
}

static int kfdsync_param_range_get(char *buf, const struct kernel_param *kp)
{
	const struct kfdsync_param_range *range = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(*range->val));
}

static const struct kernel_param_ops kfdsync_param_range_ops = {
	.set = kfdsync_param_range_set,
	.get = kfdsync_param_range_get,
};

/*
 * A writable unsigned int parameter @name in [@lo, @hi]. The description
 * is what MODULE_PARM_DESC() makes, spelled so that @name appears once.
 */
#define KFDSYNC_PARAM(name, def, lo, hi, desc)				\
	static unsigned int kfdsync_##name = (def);			\
	static struct kfdsync_param_range kfdsync_##name##_range = {	\
		.val = &kfdsync_##name, .min = (lo), .max = (hi),	\
	};								\
	module_param_cb(name, &kfdsync_param_range_ops,			\
			&kfdsync_##name##_range, 0644);			\
	MODULE_INFO(parm, #name ":" desc " (" #lo "-" #hi ", default " #def ")")

KFDSYNC_PARAM(max_contexts, 65536, 1, 65536,
	      "Open contexts, system-wide");
KFDSYNC_PARAM(max_user_contexts, 1024, 1, 65536,
	      "Open contexts of one user");
KFDSYNC_PARAM(max_events, 4096, 1, 65536,
	      "Events one context may register");
KFDSYNC_PARAM(max_user_events, 16384, 1, 1048576,
	      "Events one user may register");
KFDSYNC_PARAM(max_fences, 1024, 1, 65536,
	      "Pending fences of one context");
KFDSYNC_PARAM(max_user_fences, 16384, 1, 1048576,
	      "Pending fences (of contexts and timelines) of one user");
KFDSYNC_PARAM(max_imports, 1024, 1, 65536,
	      "Pending sync_file imports of one context, each pinning one page");
KFDSYNC_PARAM(max_user_imports, 16384, 1, 1048576,
	      "Pending sync_file imports of one user");
KFDSYNC_PARAM(watchdog_ms, 10000, 10, 3600000,
	      "Default fence watchdog in ms, capped by watchdog_max_ms");
KFDSYNC_PARAM(watchdog_max_ms, 60000, 10, 3600000,
	      "Largest per-fence watchdog in ms");
KFDSYNC_PARAM(max_timelines, 65536, 1, 65536,
	      "Open CPU timelines, system-wide");
KFDSYNC_PARAM(max_user_timelines, 1024, 1, 65536,
	      "Open CPU timelines of one user");
KFDSYNC_PARAM(max_timeline_fences, 1024, 1, 65536,
	      "Pending fences of one CPU timeline");

/** kfdsync_param_hooks() - the hooks parameter */
bool kfdsync_param_hooks(void)
{
	return kfdsync_hooks;
}

/** kfdsync_param_assume_unverified() - the assume_unverified parameter */
bool kfdsync_param_assume_unverified(void)
{
	return kfdsync_assume_unverified;
}

/** kfdsync_param_fail_hook() - the fail_hook parameter, or NULL */
const char *kfdsync_param_fail_hook(void)
{
	return kfdsync_fail_hook;
}

/** kfdsync_param_max_contexts() - the max_contexts parameter, now */
u32 kfdsync_param_max_contexts(void)
{
	return READ_ONCE(kfdsync_max_contexts);
}

/** kfdsync_param_max_user_contexts() - the max_user_contexts parameter, now */
u32 kfdsync_param_max_user_contexts(void)
{
	return READ_ONCE(kfdsync_max_user_contexts);
}

/* The default fence watchdog, capped by watchdog_max_ms. */
static u32 kfdsync_param_watchdog(u32 max_ms)
{
	return min(READ_ONCE(kfdsync_watchdog_ms), max_ms);
}

/**
 * kfdsync_params_ctx() - the limits a context takes at open
 * @limits: out: the snapshot
 */
void kfdsync_params_ctx(struct kfdsync_limits *limits)
{
	limits->max_events = READ_ONCE(kfdsync_max_events);
	limits->max_fences = READ_ONCE(kfdsync_max_fences);
	limits->max_imports = READ_ONCE(kfdsync_max_imports);
	limits->watchdog_max_ms = READ_ONCE(kfdsync_watchdog_max_ms);
	limits->watchdog_ms = kfdsync_param_watchdog(limits->watchdog_max_ms);
	limits->max_user_events = READ_ONCE(kfdsync_max_user_events);
	limits->max_user_fences = READ_ONCE(kfdsync_max_user_fences);
	limits->max_user_imports = READ_ONCE(kfdsync_max_user_imports);
}

/**
 * kfdsync_params_tl() - the limits a timeline takes at open
 * @limits: out: the snapshot
 */
void kfdsync_params_tl(struct kfdsync_tl_limits *limits)
{
	limits->max_timelines = READ_ONCE(kfdsync_max_timelines);
	limits->max_user_timelines = READ_ONCE(kfdsync_max_user_timelines);
	limits->max_fences = READ_ONCE(kfdsync_max_timeline_fences);
	limits->max_user_fences = READ_ONCE(kfdsync_max_user_fences);
	limits->watchdog_ms =
		kfdsync_param_watchdog(READ_ONCE(kfdsync_watchdog_max_ms));
}
