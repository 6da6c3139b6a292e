// SPDX-License-Identifier: MIT
/* Contexts on /dev/kfdsync and what the module reports. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"

#define KFDSYNC_DEVICE "/dev/kfdsync"

KFDSYNC_EXPORT int kfdsync_ctx_new_flags(struct kfdsync_ctx **out, uint32_t flags)
{
	struct kfdsync_ctx *ctx;
	int fd;

	if (!out || (flags & ~KFDSYNC_CTX_DISPATCH))
		return -EINVAL;
	fd = kfdsync_open_device(KFDSYNC_DEVICE);
	if (fd < 0)
		return fd;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		close(fd);
		return -ENOMEM;
	}
	ctx->fd = fd;
	ctx->flags = flags;
	ctx->register_reply = -1;
	if (kfdsync_relays_new(ctx, &ctx->relays)) {
		free(ctx);
		close(fd);
		return -ENOMEM;
	}
	pthread_mutex_init(&ctx->lock, NULL);
	kfdsync_loop_init(&ctx->loop);
	*out = ctx;
	return 0;
}

KFDSYNC_EXPORT int kfdsync_ctx_new(struct kfdsync_ctx **out)
{
	return kfdsync_ctx_new_flags(out, 0);
}

KFDSYNC_EXPORT void kfdsync_ctx_free(struct kfdsync_ctx *ctx)
{
	if (!ctx)
		return;
	/* Before the close, which cancels the imports the relay waits for. */
	kfdsync_import_relay_stop(ctx);
	/* ROCr may still call hints of this context: they must not use its fd. */
	if (ctx->forget_hints)
		ctx->forget_hints(ctx);
	/* Relays stop before the fd they report on is closed. */
	kfdsync_relays_free(ctx->relays);
	close(ctx->fd);
	kfdsync_loop_fini(&ctx->loop);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

KFDSYNC_EXPORT int kfdsync_ctx_fd(const struct kfdsync_ctx *ctx)
{
	return ctx ? ctx->fd : -EINVAL;
}

KFDSYNC_EXPORT int kfdsync_ctx_set_relay(struct kfdsync_ctx *ctx, bool enabled)
{
	if (!ctx)
		return -EINVAL;
	return kfdsync_relays_enable(ctx->relays, enabled);
}

KFDSYNC_EXPORT int kfdsync_ctx_set_dispatch_interval(struct kfdsync_ctx *ctx, int64_t interval_ns)
{
	if (!ctx || interval_ns < 0 || (interval_ns && interval_ns < 10000) ||
	    interval_ns > 1000000000)
		return -EINVAL;
	if (!kfdsync_ctx_dispatching(ctx))
		return -EOPNOTSUPP;
	return kfdsync_relays_set_interval(ctx->relays, interval_ns);
}

/* The public structs' sizes are part of the ABI (kfdsync.h, "Structs"). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct kfdsync_module_info) == 144, "kfdsync_module_info");
_Static_assert(sizeof(struct kfdsync_event_state) == 48, "kfdsync_event_state");
_Static_assert(sizeof(struct kfdsync_import_desc) == 72, "kfdsync_import_desc");
_Static_assert(sizeof(struct kfdsync_fence_status) == 96, "kfdsync_fence_status");
_Static_assert(sizeof(struct kfdsync_sync_file_status) == 64, "kfdsync_sync_file_status");
_Static_assert(sizeof(struct kfdsync_hsa_signal) == 40, "kfdsync_hsa_signal");
_Static_assert(sizeof(struct kfdsync_caps) == 368, "kfdsync_caps");
#endif

KFDSYNC_EXPORT int kfdsync_ctx_get_module_info(struct kfdsync_ctx *ctx,
					       struct kfdsync_module_info *info)
{
	struct kfdsync_info ki;
	int ret;

	if (!ctx || !info)
		return -EINVAL;
	memset(&ki, 0, sizeof(ki));
	ret = kfdsync_ctx_ioctl(ctx->fd, KFDSYNC_IOCTL_INFO, &ki);
	if (ret < 0)
		return ret;
	/*
	 * INFO keeps its number and layout in every ABI: report a module of
	 * another ABI as it is (abi_version; kfdsync_ctx_get_caps() says
	 * KFDSYNC_CAP_MODULE_ABI is missing) rather than fail.
	 */

	memset(info, 0, sizeof(*info));
	info->abi_version = ki.abi_version;
	info->kernel_version = ki.kernel_version;
	_Static_assert(sizeof(info->release) == sizeof(ki.release), "release");
	memcpy(info->release, ki.release, sizeof(ki.release));
	info->release[sizeof(info->release) - 1] = '\0';
	info->hooks = ki.hooks;
	info->hooks_supported = ki.hooks_supported;
	info->flags = ki.info_flags;
	info->max_contexts = ki.max_contexts;
	info->max_events = ki.max_events;
	info->max_fences = ki.max_fences;
	info->watchdog_ms = ki.watchdog_ms;
	info->watchdog_max_ms = ki.watchdog_max_ms;
	return 0;
}

_Static_assert(sizeof(struct kfdsync_module_status) == 256, "kfdsync_module_status");
_Static_assert(KFDSYNC_STATUS_TEXT == KFDSYNC_STATUS_TEXT_LEN, "status text");

KFDSYNC_EXPORT int kfdsync_ctx_get_module_status(struct kfdsync_ctx *ctx,
						 struct kfdsync_module_status *status)
{
	struct kfdsync_status ks;
	int ret;

	if (!ctx || !status)
		return -EINVAL;
	memset(&ks, 0, sizeof(ks));
	ret = kfdsync_ctx_ioctl(ctx->fd, KFDSYNC_IOCTL_STATUS, &ks);
	if (ret < 0)
		return ret;

	memset(status, 0, sizeof(*status));
	status->source = ks.source;
	status->relay_reason = ks.relay_reason;
	status->hooks = ks.hooks;
	status->watch = ks.watch;
	status->hooks_missed = ks.hooks_missed;
	status->user_contexts = ks.user_contexts;
	status->user_timelines = ks.user_timelines;
	status->user_events = ks.user_events;
	status->user_fences = ks.user_fences;
	status->max_user_contexts = ks.max_user_contexts;
	status->max_user_timelines = ks.max_user_timelines;
	status->max_user_events = ks.max_user_events;
	status->max_user_fences = ks.max_user_fences;
	status->max_contexts = ks.max_contexts;
	status->max_timelines = ks.max_timelines;
	memcpy(status->detail, ks.detail, sizeof(status->detail));
	status->detail[sizeof(status->detail) - 1] = '\0';
	memcpy(status->verified, ks.verified, sizeof(status->verified));
	status->verified[sizeof(status->verified) - 1] = '\0';
	return 0;
}

_Static_assert(sizeof(struct kfdsync_amdkfd_abi_info) == 344, "kfdsync_amdkfd_abi_info");
_Static_assert(KFDSYNC_ABI_NAME_TEXT == KFDSYNC_AMDKFD_ABI_NAME_LEN &&
	       KFDSYNC_ABI_LIST_TEXT == KFDSYNC_AMDKFD_ABI_LIST_LEN &&
	       KFDSYNC_ABI_REASON_TEXT == KFDSYNC_AMDKFD_ABI_REASON_LEN, "abi text");

/* A string of the module's, copied and NUL-terminated whatever it held. */
#define COPY_TEXT(dst, src) do {					\
	_Static_assert(sizeof(dst) == sizeof(src), #dst);		\
	memcpy(dst, src, sizeof(dst));					\
	(dst)[sizeof(dst) - 1] = '\0';					\
} while (0)

KFDSYNC_EXPORT int kfdsync_ctx_get_amdkfd_abi(struct kfdsync_ctx *ctx,
					      struct kfdsync_amdkfd_abi_info *abi)
{
	struct kfdsync_amdkfd_abi ka;
	int ret;

	if (!ctx || !abi)
		return -EINVAL;
	memset(&ka, 0, sizeof(ka));
	ret = kfdsync_ioctl(ctx->fd, KFDSYNC_IOCTL_AMDKFD_ABI, &ka);
	if (ret == -ENOTTY)
		return -EOPNOTSUPP;
	if (ret < 0)
		return ret;

	memset(abi, 0, sizeof(*abi));
	abi->verdict = ka.verdict;
	COPY_TEXT(abi->abi, ka.abi);
	COPY_TEXT(abi->implemented, ka.implemented);
	COPY_TEXT(abi->reason, ka.reason);
	return 0;
}

KFDSYNC_EXPORT const char *kfdsync_hook_name(uint32_t hook_bit)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ KFDSYNC_HOOK_GPU_INTERRUPT, "gpu_interrupt" },
		{ KFDSYNC_HOOK_CPU_SET, "cpu_set" },
		{ KFDSYNC_HOOK_HW_EXCEPTION, "hw_exception" },
		{ KFDSYNC_HOOK_VM_FAULT, "vm_fault" },
		{ KFDSYNC_HOOK_RESET, "reset" },
		{ KFDSYNC_HOOK_POISON, "poison" },
		{ KFDSYNC_HOOK_DESTROY, "destroy" },
		{ KFDSYNC_HOOK_FREE, "free" },
		{ KFDSYNC_HOOK_UNWRITTEN, "unwritten" },
		{ KFDSYNC_HOOK_TERMINATE, "terminate" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].bit == hook_bit)
			return names[i].name;
	return NULL;
}
