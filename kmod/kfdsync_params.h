/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: the module parameters, read through snapshots.
 */

#ifndef KFDSYNC_PARAMS_H
#define KFDSYNC_PARAMS_H

#include <linux/types.h>

/**
 * struct kfdsync_limits - the limits a context or timeline takes at open
 * @max_events:		Events a context may register.
 * @max_fences:		Pending fences of a context.
 * @max_imports:	Pending imports of a context.
 * @watchdog_ms:	Default fence watchdog, in milliseconds.
 * @watchdog_max_ms:	Upper bound of a per-fence watchdog.
 * @max_user_events:	Events the opener's user may register.
 * @max_user_fences:	Pending fences of the opener's user.
 * @max_user_imports:	Pending imports of the opener's user.
 *
 * Snapshots of the module parameters, so that a parameter changed through
 * sysfs never changes the rules of a live context.
 */
struct kfdsync_limits {
	u32 max_events;
	u32 max_fences;
	u32 max_imports;
	u32 watchdog_ms;
	u32 watchdog_max_ms;
	u32 max_user_events;
	u32 max_user_fences;
	u32 max_user_imports;
};

/**
 * struct kfdsync_tl_limits - what a CPU timeline takes at open
 * @max_timelines:	Open timelines, system-wide.
 * @max_user_timelines:	Open timelines of one user.
 * @max_fences:		Pending fences of a timeline.
 * @max_user_fences:	Pending fences of one user.
 * @watchdog_ms:	Fence watchdog.
 */
struct kfdsync_tl_limits {
	u32 max_timelines;
	u32 max_user_timelines;
	u32 max_fences;
	u32 max_user_fences;
	u32 watchdog_ms;
};

bool kfdsync_param_hooks(void);
bool kfdsync_param_assume_unverified(void);
const char *kfdsync_param_fail_hook(void);
u32 kfdsync_param_max_contexts(void);
u32 kfdsync_param_max_user_contexts(void);
void kfdsync_params_ctx(struct kfdsync_limits *limits);
void kfdsync_params_tl(struct kfdsync_tl_limits *limits);

#endif /* KFDSYNC_PARAMS_H */
