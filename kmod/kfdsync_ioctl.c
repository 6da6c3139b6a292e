// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: the ioctls of /dev/kfdsync.
 *
 * One dispatcher (kfdsync_ioctl()) for a table of ioctls, as drm_ioctl()
 * does: it looks the request up by number and checks its direction and
 * size (anything else is -ENOTTY), copies _IOC_SIZE bytes in, runs the
 * ioctl's check of its arguments (unknown flags, non-zero padding, values
 * out of range: -EINVAL), then refuses a caller that is not the context's
 * process (-EPERM) for the ioctls that act for it, then runs the handler,
 * and copies the argument back for those that return one. That order is
 * the documented order of errors of every ioctl. Handlers that return a
 * new fd copy back themselves, before installing it (kfdsync_fence.c).
 */

#include <linux/compiler.h>
#include <linux/dma-fence.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/version.h>

#include <linux/kfdsync.h>

#include "kfdsync_amdkfd.h"
#include "kfdsync_ctx.h"
#include "kfdsync_event.h"
#include "kfdsync_fence.h"
#include "kfdsync_import.h"
#include "kfdsync_ioctl.h"
#include "kfdsync_params.h"
#include "kfdsync_slot.h"
#include "kfdsync_user.h"
#include "kfdsync_watch.h"

/* Every ioctl argument: the dispatcher's buffer. */
union kfdsync_ioctl_args {
	struct kfdsync_info info;
	struct kfdsync_event_register reg;
	struct kfdsync_event_unregister unreg;
	struct kfdsync_event_query query;
	struct kfdsync_export export;
	struct kfdsync_relay_signal relay;
	struct kfdsync_relay_signals relays;
	struct kfdsync_import import;
	struct kfdsync_export_condition cond;
	struct kfdsync_status status;
	struct kfdsync_amdkfd_abi abi;
};

static int kfdsync_check_info(const void *data)
{
	const struct kfdsync_info *args = data;

	return args->flags || args->pad ? -EINVAL : 0;
}

static int kfdsync_ioctl_info(struct kfdsync_ctx *ctx, void *data,
			      void __user *uarg)
{
	struct kfdsync_info *info = data;
	struct kfdsync_amdkfd_state st;

	kfdsync_amdkfd_state(&st);
	memset(info, 0, sizeof(*info));
	info->abi_version = KFDSYNC_ABI_VERSION;
	/* The version of the headers the module was built against. */
	info->kernel_version = KERNEL_VERSION(LINUX_VERSION_MAJOR,
					      LINUX_VERSION_PATCHLEVEL,
					      LINUX_VERSION_SUBLEVEL);
	info->hooks = st.hooks;
	info->hooks_supported = kfdsync_amdkfd_supported();
	if (st.present)
		info->info_flags |= KFDSYNC_INFO_AMDKFD_PRESENT;
	if (st.reason == KFDSYNC_RELAY_FORCED)
		info->info_flags |= KFDSYNC_INFO_RELAY_FORCED;
	if (st.reason == KFDSYNC_RELAY_UNVERIFIED ||
	    st.reason == KFDSYNC_RELAY_NO_BTF)
		info->info_flags |= KFDSYNC_INFO_AMDKFD_UNVERIFIED;
	info->max_contexts = kfdsync_param_max_user_contexts();
	info->max_events = ctx->limits.max_events;
	info->max_fences = ctx->limits.max_fences;
	info->watchdog_ms = ctx->limits.watchdog_ms;
	info->watchdog_max_ms = ctx->limits.watchdog_max_ms;
	strscpy(info->release, init_utsname()->release, sizeof(info->release));
	return 0;
}

static int kfdsync_check_status(const void *data)
{
	const struct kfdsync_status *args = data;

	return args->flags || args->pad ? -EINVAL : 0;
}

static int kfdsync_ioctl_status(struct kfdsync_ctx *ctx, void *data,
				void __user *uarg)
{
	struct kfdsync_status *status = data;
	struct kfdsync_amdkfd_state st;
	u32 usage[KFDSYNC_USER_NR];
	struct kfdsync_tl_limits tl;
	struct kfdsync_limits lim;

	kfdsync_amdkfd_state(&st);
	kfdsync_params_ctx(&lim);
	kfdsync_params_tl(&tl);
	/* The caller's user, whoever opened the context. */
	kfdsync_user_usage(usage);
	memset(status, 0, sizeof(*status));
	status->source = st.active ? KFDSYNC_SOURCE_HOOKS :
				     KFDSYNC_SOURCE_RELAY;
	status->relay_reason = st.active ? 0 : st.reason;
	status->hooks = st.hooks;
	if (kfdsync_slot_watchable())
		status->watch |= KFDSYNC_STATUS_WATCH_SLOTS;
	status->hooks_missed = st.missed;
	status->user_contexts = usage[KFDSYNC_USER_CONTEXTS];
	status->user_timelines = usage[KFDSYNC_USER_TIMELINES];
	status->user_events = usage[KFDSYNC_USER_EVENTS];
	status->user_fences = usage[KFDSYNC_USER_FENCES];
	status->max_user_contexts = kfdsync_param_max_user_contexts();
	status->max_user_timelines = tl.max_user_timelines;
	status->max_user_events = lim.max_user_events;
	status->max_user_fences = lim.max_user_fences;
	status->max_contexts = kfdsync_param_max_contexts();
	status->max_timelines = tl.max_timelines;
	strscpy(status->detail, st.active ? "" : st.detail,
		sizeof(status->detail));
	kfdsync_amdkfd_abi_names(status->verified, sizeof(status->verified));
	return 0;
}

static int kfdsync_check_amdkfd_abi(const void *data)
{
	const struct kfdsync_amdkfd_abi *args = data;

	return args->flags || args->pad ? -EINVAL : 0;
}

static int kfdsync_ioctl_amdkfd_abi(struct kfdsync_ctx *ctx, void *data,
				    void __user *uarg)
{
	kfdsync_amdkfd_abi(data);
	return 0;
}

static int kfdsync_check_register(const void *data)
{
	const struct kfdsync_event_register *args = data;

	return args->flags & ~(KFDSYNC_REGISTER_REPORT | KFDSYNC_REGISTER_HOOKS |
			       KFDSYNC_REGISTER_RELAY) ? -EINVAL : 0;
}

static int kfdsync_ioctl_event_register(struct kfdsync_ctx *ctx, void *data,
					void __user *uarg)
{
	struct kfdsync_event_register *args = data;
	u32 report = args->flags & KFDSYNC_REGISTER_REPORT;
	struct kfdsync_event_state st;
	int ret;

	ret = kfdsync_event_register(&ctx->events, args->event_id, args->slot_addr);
	if (ret)
		return ret;
	args->age = 0;
	args->flags = report;
	/*
	 * The source was decided by the registration and never changes; a
	 * failed query means another thread unregistered the event already.
	 */
	if (report && !kfdsync_event_query(&ctx->events, args->event_id, &st))
		args->flags |= st.source == KFDSYNC_SOURCE_HOOKS ?
			       KFDSYNC_REGISTER_HOOKS : KFDSYNC_REGISTER_RELAY;
	if (copy_to_user(uarg, args, sizeof(*args))) {
		kfdsync_event_unregister(&ctx->events, args->event_id);
		return -EFAULT;
	}
	return 0;
}

static int kfdsync_check_unregister(const void *data)
{
	const struct kfdsync_event_unregister *args = data;

	return args->flags ? -EINVAL : 0;
}

static int kfdsync_ioctl_event_unregister(struct kfdsync_ctx *ctx, void *data,
					  void __user *uarg)
{
	const struct kfdsync_event_unregister *args = data;

	return kfdsync_event_unregister(&ctx->events, args->event_id);
}

static int kfdsync_check_query(const void *data)
{
	const struct kfdsync_event_query *args = data;

	return args->flags ? -EINVAL : 0;
}

static int kfdsync_ioctl_event_query(struct kfdsync_ctx *ctx, void *data,
				     void __user *uarg)
{
	struct kfdsync_event_query *args = data;
	struct kfdsync_event_state st;
	int ret;

	ret = kfdsync_event_query(&ctx->events, args->event_id, &st);
	if (ret)
		return ret;
	args->age = st.age;
	args->error = st.error;
	args->pending = st.pending;
	args->source = st.source;
	args->last_status = st.last_status;
	return 0;
}

static int kfdsync_check_export(const void *data)
{
	const struct kfdsync_export *args = data;

	return args->flags || args->pad ? -EINVAL : 0;
}

static int kfdsync_ioctl_export_sync_file(struct kfdsync_ctx *ctx, void *data,
					  void __user *uarg)
{
	struct kfdsync_export *args = data;
	struct dma_fence *fence;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	fence = kfdsync_event_export(&ctx->events, args->event_id, args->age, NULL,
				     args->deadline_ns, NULL);
	if (IS_ERR(fence)) {
		put_unused_fd(fd);
		return PTR_ERR(fence);
	}
	args->fd = fd;
	return kfdsync_sync_file_install(fd, fence, NULL, uarg, args,
					 sizeof(*args));
}

/* A fence of @id (@watch or @age) signalling the caller's eventfd @efd. */
static int kfdsync_export_eventfd(struct kfdsync_ctx *ctx, u32 id, u64 age,
				  struct kfdsync_watch *watch, u64 deadline_ns,
				  int efd)
{
	struct eventfd_ctx *eventfd;
	struct dma_fence *fence;

	eventfd = eventfd_ctx_fdget(efd);
	if (IS_ERR(eventfd)) {
		if (watch)
			kfdsync_watch_free(watch);
		return PTR_ERR(eventfd);
	}
	/* On success the fence owns the eventfd reference. */
	fence = kfdsync_event_export(&ctx->events, id, age, watch, deadline_ns,
				     eventfd);
	if (IS_ERR(fence)) {
		eventfd_ctx_put(eventfd);
		return PTR_ERR(fence);
	}
	dma_fence_put(fence);
	return 0;
}

static int kfdsync_ioctl_export_eventfd(struct kfdsync_ctx *ctx, void *data,
					void __user *uarg)
{
	const struct kfdsync_export *args = data;

	return kfdsync_export_eventfd(ctx, args->event_id, args->age, NULL,
				      args->deadline_ns, args->fd);
}

static int kfdsync_check_relay(const void *data)
{
	const struct kfdsync_relay_signal *args = data;

	return args->flags ? -EINVAL : 0;
}

static int kfdsync_ioctl_relay_signal(struct kfdsync_ctx *ctx, void *data,
				      void __user *uarg)
{
	const struct kfdsync_relay_signal *args = data;

	return kfdsync_event_relay(&ctx->events, args->event_id, 1);
}

static int kfdsync_check_relays(const void *data)
{
	const struct kfdsync_relay_signals *args = data;

	return args->flags || args->pad || !args->count ||
	       args->count > INT_MAX ? -EINVAL : 0;
}

static int kfdsync_ioctl_relay_signals(struct kfdsync_ctx *ctx, void *data,
				       void __user *uarg)
{
	const struct kfdsync_relay_signals *args = data;

	return kfdsync_event_relay(&ctx->events, args->event_id, args->count);
}

static int kfdsync_ioctl_import_sync_file(struct kfdsync_ctx *ctx, void *data,
					  void __user *uarg)
{
	return kfdsync_import(&ctx->imports, data);
}

static int kfdsync_check_condition(const void *data)
{
	const struct kfdsync_export_condition *args = data;

	if (args->flags & ~KFDSYNC_CONDITION_EVENTFD ||
	    args->condition > KFDSYNC_CONDITION_GTE ||
	    args->value_addr != (unsigned long)args->value_addr ||
	    !IS_ALIGNED(args->value_addr, sizeof(u64)))
		return -EINVAL;
	return 0;
}

static int kfdsync_ioctl_export_condition(struct kfdsync_ctx *ctx,
					  void *data, void __user *uarg)
{
	struct kfdsync_export_condition *args = data;
	struct kfdsync_watch *watch;
	struct dma_fence *fence;
	int fd;

	watch = kfdsync_watch_new(args->value_addr, args->condition,
				  args->compare_value);
	if (IS_ERR(watch))
		return PTR_ERR(watch);
	if (args->flags & KFDSYNC_CONDITION_EVENTFD)
		return kfdsync_export_eventfd(ctx, args->event_id, 0, watch,
					      args->deadline_ns, args->fd);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		kfdsync_watch_free(watch);
		return fd;
	}
	/* Consumes the watch. */
	fence = kfdsync_event_export(&ctx->events, args->event_id, 0, watch,
				     args->deadline_ns, NULL);
	if (IS_ERR(fence)) {
		put_unused_fd(fd);
		return PTR_ERR(fence);
	}
	args->fd = fd;
	return kfdsync_sync_file_install(fd, fence, NULL, uarg, args,
					 sizeof(*args));
}

/* The ioctl acts for the context's process: others get -EPERM. */
#define KFDSYNC_IOCTL_OWNER	0x1
/* The dispatcher copies the argument back after the handler succeeded. */
#define KFDSYNC_IOCTL_COPY_OUT	0x2

/**
 * struct kfdsync_ioctl_desc - one ioctl of /dev/kfdsync
 * @cmd:	The request, number, direction and size.
 * @check:	Checks the copied-in argument alone: 0 or -EINVAL.
 * @func:	The handler.
 * @flags:	KFDSYNC_IOCTL_*.
 */
struct kfdsync_ioctl_desc {
	unsigned int cmd;
	int (*check)(const void *data);
	int (*func)(struct kfdsync_ctx *ctx, void *data, void __user *uarg);
	unsigned int flags;
};

/* One table entry: the request, its argument check, handler and flags. */
#define KFDSYNC_IOCTL_DEF(name, chk, fn, fl)				\
	[_IOC_NR(KFDSYNC_IOCTL_##name)] = {				\
		.cmd = KFDSYNC_IOCTL_##name, .check = chk, .func = fn,	\
		.flags = fl,						\
	}

static const struct kfdsync_ioctl_desc kfdsync_ioctls[] = {
	KFDSYNC_IOCTL_DEF(INFO, kfdsync_check_info,
			  kfdsync_ioctl_info, KFDSYNC_IOCTL_COPY_OUT),
	KFDSYNC_IOCTL_DEF(EVENT_REGISTER, kfdsync_check_register,
			  kfdsync_ioctl_event_register, KFDSYNC_IOCTL_OWNER),
	KFDSYNC_IOCTL_DEF(EVENT_UNREGISTER, kfdsync_check_unregister,
			  kfdsync_ioctl_event_unregister, KFDSYNC_IOCTL_OWNER),
	KFDSYNC_IOCTL_DEF(EVENT_QUERY, kfdsync_check_query,
			  kfdsync_ioctl_event_query,
			  KFDSYNC_IOCTL_OWNER | KFDSYNC_IOCTL_COPY_OUT),
	KFDSYNC_IOCTL_DEF(EXPORT_SYNC_FILE, kfdsync_check_export,
			  kfdsync_ioctl_export_sync_file, KFDSYNC_IOCTL_OWNER),
	KFDSYNC_IOCTL_DEF(EXPORT_EVENTFD, kfdsync_check_export,
			  kfdsync_ioctl_export_eventfd, KFDSYNC_IOCTL_OWNER),
	KFDSYNC_IOCTL_DEF(RELAY_SIGNAL, kfdsync_check_relay,
			  kfdsync_ioctl_relay_signal, KFDSYNC_IOCTL_OWNER),
	KFDSYNC_IOCTL_DEF(IMPORT_SYNC_FILE, kfdsync_import_check,
			  kfdsync_ioctl_import_sync_file, KFDSYNC_IOCTL_OWNER),
	KFDSYNC_IOCTL_DEF(EXPORT_CONDITION, kfdsync_check_condition,
			  kfdsync_ioctl_export_condition, KFDSYNC_IOCTL_OWNER),
	KFDSYNC_IOCTL_DEF(STATUS, kfdsync_check_status,
			  kfdsync_ioctl_status, KFDSYNC_IOCTL_COPY_OUT),
	KFDSYNC_IOCTL_DEF(RELAY_SIGNALS, kfdsync_check_relays,
			  kfdsync_ioctl_relay_signals, KFDSYNC_IOCTL_OWNER),
	KFDSYNC_IOCTL_DEF(AMDKFD_ABI, kfdsync_check_amdkfd_abi,
			  kfdsync_ioctl_amdkfd_abi, KFDSYNC_IOCTL_COPY_OUT),
};

/**
 * kfdsync_ioctl() - the dispatcher of /dev/kfdsync's ioctls
 * @file: the file, whose private data is the context
 * @cmd: the request
 * @arg: its argument, a user pointer
 *
 * Return: 0 or a new fd, or -errno as documented per ioctl in
 * include/uapi/linux/kfdsync.h; -ENOTTY for requests kfdsync does not know.
 */
long kfdsync_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kfdsync_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	const struct kfdsync_ioctl_desc *desc;
	union kfdsync_ioctl_args args;
	unsigned int nr = _IOC_NR(cmd);
	int ret;

	if (_IOC_TYPE(cmd) != KFDSYNC_IOCTL_BASE ||
	    nr >= ARRAY_SIZE(kfdsync_ioctls))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(kfdsync_ioctls));
	desc = &kfdsync_ioctls[nr];
	if (!desc->func || desc->cmd != cmd)
		return -ENOTTY;
	BUILD_BUG_ON(sizeof(args) < sizeof(struct kfdsync_amdkfd_abi));

	if (copy_from_user(&args, uarg, _IOC_SIZE(cmd)))
		return -EFAULT;
	ret = desc->check ? desc->check(&args) : 0;
	if (ret)
		return ret;
	if ((desc->flags & KFDSYNC_IOCTL_OWNER) && !kfdsync_ctx_is_caller(ctx))
		return -EPERM;
	ret = desc->func(ctx, &args, uarg);
	if (ret || !(desc->flags & KFDSYNC_IOCTL_COPY_OUT))
		return ret;
	return copy_to_user(uarg, &args, _IOC_SIZE(cmd)) ? -EFAULT : 0;
}
