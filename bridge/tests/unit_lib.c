// SPDX-License-Identifier: MIT
/*
 * libkfdsync host unit tests: argument checking and error codes of every
 * function that can be exercised without kfdsync.ko or a DRM device.
 */
#include <fcntl.h>
#include <unistd.h>

#include "kfdsync.h"
#include "tap.h"

struct errcase {
	const char *name;
	int got;
	int want;
};

/* Built without libdrm_amdgpu, the amdgpu functions say so instead. */
#ifdef KFDSYNC_HAVE_AMDGPU
#define AMDGPU_ERR(e) (e)
#else
#define AMDGPU_ERR(e) (-EOPNOTSUPP)
#endif

/* Built without libhsakmt's header, kfdsync_event_add_hsa() says so. */
#ifdef KFDSYNC_HAVE_HSAKMT
#define HSAKMT_ERR(e) (e)
#else
#define HSAKMT_ERR(e) (-EOPNOTSUPP)
#endif

int main(void)
{
	/*
	 * Never dereferenced: the argument checks fail first. The test
	 * machines have no amdgpu device to get a real handle from.
	 */
	struct amdgpu_device *fake_dev = (struct amdgpu_device *)&fake_dev;
	/* Larger than libhsakmt's HsaEvent; only read after the ctx check. */
	uint64_t fake_event[32] = { 0 };
	uint32_t h = 0;
	struct kfdsync_sync_file_status st;
	struct kfdsync_module_info mi;
	struct kfdsync_caps caps = { 0 };
	struct kfdsync_ctx *ctx = NULL;
	char why[128];
	int p[2], closed;
	unsigned int named = 0;

	if (pipe2(p, O_CLOEXEC))
		tap_bail("pipe2");
	closed = dup(p[0]);
	close(closed);

	for (uint32_t bit = 1; bit; bit <<= 1)
		named += kfdsync_hook_name(bit) != NULL;

	const struct errcase cases[] = {
		{ "ctx_new_null", kfdsync_ctx_new(NULL), -EINVAL },
		{ "event_add_hsa_null_event", kfdsync_event_add_hsa(NULL, NULL, NULL), -EINVAL },
		{ "event_add_hsa_null_ctx",
		  kfdsync_event_add_hsa(NULL, (const struct _HsaEvent *)fake_event, NULL),
		  HSAKMT_ERR(-EINVAL) },
		{ "ctx_fd_null", kfdsync_ctx_fd(NULL), -EINVAL },
		{ "ctx_set_relay_null", kfdsync_ctx_set_relay(NULL, false), -EINVAL },
		{ "ctx_new_flags_null", kfdsync_ctx_new_flags(NULL, KFDSYNC_CTX_DISPATCH), -EINVAL },
		{ "ctx_new_flags_unknown", kfdsync_ctx_new_flags(&ctx, 2), -EINVAL },
		{ "ctx_get_poll_fd_null", kfdsync_ctx_get_poll_fd(NULL), -EINVAL },
		{ "ctx_dispatch_null", kfdsync_ctx_dispatch(NULL), -EINVAL },
		{ "ctx_set_dispatch_interval_null",
		  kfdsync_ctx_set_dispatch_interval(NULL, 1000000), -EINVAL },
		{ "ctx_get_caps_null", kfdsync_ctx_get_caps(NULL, &caps), -EINVAL },
		{ "get_caps_null_caps", kfdsync_get_caps(NULL, 0, NULL), -EINVAL },
		{ "get_caps_unknown_flag", kfdsync_get_caps(NULL, 1u << 1, &caps), -EINVAL },
		{ "caps_why_not_null", kfdsync_caps_why_not(NULL, KFDSYNC_CAP_HOOKS, why, 8),
		  -EINVAL },
		{ "caps_why_not_two_bits",
		  kfdsync_caps_why_not(&caps, KFDSYNC_CAP_HOOKS | KFDSYNC_CAP_HSA, why, 8), -EINVAL },
		{ "caps_why_not_unknown_bit", kfdsync_caps_why_not(&caps, 1u << 30, why, 8),
		  -EINVAL },
		{ "caps_why_not_null_buf", kfdsync_caps_why_not(&caps, KFDSYNC_CAP_HSA, NULL, 8),
		  -EINVAL },
		{ "sync_file_wait_many_null", kfdsync_sync_file_wait_many(NULL, 1, 0, 0, NULL),
		  -EINVAL },
		{ "sync_file_wait_many_none", kfdsync_sync_file_wait_many(p, 0, 0, 0, NULL), -EINVAL },
		{ "sync_file_wait_many_bad_flags", kfdsync_sync_file_wait_many(p, 1, 2, 0, NULL),
		  -EINVAL },
		{ "sync_file_wait_many_pipe", kfdsync_sync_file_wait_many(p, 2, 0, -1, NULL),
		  -EINVAL },
		{ "sync_file_wait_many_closed", kfdsync_sync_file_wait_many(&closed, 1, 0, -1, NULL),
		  -EBADF },
		{ "sync_file_wait_status_pipe", kfdsync_sync_file_wait_status(p[0], 0, NULL),
		  -EINVAL },
		{ "amdgpu_fence_null_dev", kfdsync_amdgpu_fence_export_sync_file(NULL, NULL),
		  AMDGPU_ERR(-EINVAL) },
		{ "amdgpu_syncobj_null_dev", kfdsync_amdgpu_syncobj_from_sync_file(NULL, p[0], &h),
		  AMDGPU_ERR(-EINVAL) },
		{ "amdgpu_syncobj_null_out", kfdsync_amdgpu_syncobj_from_sync_file(fake_dev, p[0], NULL),
		  AMDGPU_ERR(-EINVAL) },
		{ "amdgpu_syncobj_not_sync_file",
		  kfdsync_amdgpu_syncobj_from_sync_file(fake_dev, p[0], &h), AMDGPU_ERR(-EINVAL) },
		{ "amdgpu_syncobj_closed_fd",
		  kfdsync_amdgpu_syncobj_from_sync_file(fake_dev, closed, &h), AMDGPU_ERR(-EBADF) },
		{ "module_info_null_ctx", kfdsync_ctx_get_module_info(NULL, &mi), -EINVAL },
		{ "sync_file_check_pipe", kfdsync_sync_file_check(p[0]), 0 },
		{ "sync_file_check_closed", kfdsync_sync_file_check(closed), -EBADF },
		{ "sync_file_merge_pipes", kfdsync_sync_file_merge("x", p[0], p[1]), -EINVAL },
		{ "sync_file_merge_closed", kfdsync_sync_file_merge(NULL, closed, closed), -EBADF },
		/* One rule for names: > 31 bytes is -EINVAL, checked first. */
		{ "sync_file_merge_name_40_bytes_einval",
		  kfdsync_sync_file_merge("a name of forty bytes, nine too many....", closed, closed),
		  -EINVAL },
		{ "sync_file_merge_name_32_bytes_einval",
		  kfdsync_sync_file_merge("thirty-two bytes, one too many..", closed, closed),
		  -EINVAL },
		{ "sync_file_merge_name_31_bytes_accepted",
		  kfdsync_sync_file_merge("thirty-one bytes: the longest..", closed, closed), -EBADF },
		{ "timeline_create_fence_null", kfdsync_timeline_create_fence(NULL, 1, "x"), -EINVAL },
		{ "event_relay_null_ctx", kfdsync_event_relay(NULL, 1), -EINVAL },
		{ "event_get_state_null_ctx", kfdsync_event_get_state(NULL, 1, NULL), -EINVAL },
		{ "import_null_ctx", kfdsync_import_sync_file(NULL, p[0], NULL), -EINVAL },
		{ "sync_file_wait_pipe", kfdsync_sync_file_wait(p[0], 0), -EINVAL },
		{ "sync_file_wait_closed", kfdsync_sync_file_wait(closed, -1), -EBADF },
		{ "sync_file_status_pipe", kfdsync_sync_file_get_status(p[0], &st, NULL, 0), -EINVAL },
		{ "sync_file_status_null_fences", kfdsync_sync_file_get_status(p[0], &st, NULL, 1),
		  -EINVAL },
		{ "dmabuf_export_no_flags", kfdsync_dmabuf_export_sync_file(p[0], 0), -EINVAL },
		{ "dmabuf_export_bad_flags", kfdsync_dmabuf_export_sync_file(p[0], 4), -EINVAL },
		/* "Not supported" is only ever -EOPNOTSUPP: a pipe is bad input. */
		{ "dmabuf_export_not_dmabuf",
		  kfdsync_dmabuf_export_sync_file(p[0], KFDSYNC_DMABUF_READ), -EINVAL },
		{ "dmabuf_import_bad_flags", kfdsync_dmabuf_import_sync_file(p[0], p[1], 8), -EINVAL },
		{ "dmabuf_import_not_dmabuf",
		  kfdsync_dmabuf_import_sync_file(p[0], p[1], KFDSYNC_DMABUF_WRITE), -EINVAL },
		{ "syncobj_import_not_drm", kfdsync_syncobj_import_sync_file(p[0], 1, 0, p[1]),
		  -EOPNOTSUPP },
		{ "syncobj_export_not_drm_timeline", kfdsync_syncobj_export_sync_file(p[0], 1, 5),
		  -EOPNOTSUPP },
	};
	const unsigned int n = sizeof(cases) / sizeof(cases[0]);

	/* The public structs' sizes are ABI (kfdsync.h, "Structs"). */
	const struct {
		const char *name;
		size_t size, want;
	} sizes[] = {
		{ "kfdsync_module_info", sizeof(struct kfdsync_module_info), 144 },
		{ "kfdsync_event_state", sizeof(struct kfdsync_event_state), 48 },
		{ "kfdsync_import_desc", sizeof(struct kfdsync_import_desc), 72 },
		{ "kfdsync_fence_status", sizeof(struct kfdsync_fence_status), 96 },
		{ "kfdsync_sync_file_status", sizeof(struct kfdsync_sync_file_status), 64 },
		{ "kfdsync_hsa_signal", sizeof(struct kfdsync_hsa_signal), 40 },
		{ "kfdsync_caps", sizeof(struct kfdsync_caps), 368 },
	};
	const unsigned int nsizes = sizeof(sizes) / sizeof(sizes[0]);
	char long_name[KFDSYNC_NAME_MAX + 2];

	tap_plan(n + nsizes + 9);
	for (unsigned int i = 0; i < nsizes; i++)
		tap_ok(sizes[i].size == sizes[i].want, "struct_size_%s (%zu, want %zu)",
		       sizes[i].name, sizes[i].size, sizes[i].want);
	tap_ok(KFDSYNC_NAME_MAX == 31 && sizeof(mi.release) == KFDSYNC_RELEASE_LEN,
	       "name_and_release_sizes");
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	tap_ok(kfdsync_sync_file_merge(long_name, p[0], p[1]) == -EINVAL,
	       "sync_file_merge_name_too_long_before_fd_check");
	for (unsigned int i = 0; i < n; i++) {
		if (!tap_ok(cases[i].got == cases[i].want, "%s", cases[i].name))
			tap_diag("got %d, want %d", cases[i].got, cases[i].want);
	}
	tap_ok(named == 10 && !strcmp(kfdsync_hook_name(KFDSYNC_HOOK_GPU_INTERRUPT),
				     "gpu_interrupt") && !kfdsync_hook_name(1u << 31),
	       "hook_names_known_bits_only");
	kfdsync_ctx_free(NULL);
	tap_ok(true, "ctx_free_null_is_noop");

	/* Why a capability is missing, from the facts in the struct. */
	caps = (struct kfdsync_caps){ .supported = KFDSYNC_CAP_HSA, .kernel_version = 0x060100,
				      .module_abi = 2, .kfd_version = (1u << 16) | 12 };
	tap_ok(kfdsync_caps_why_not(&caps, KFDSYNC_CAP_HSA, why, sizeof(why)) == 1 && !why[0] &&
	       kfdsync_caps_why_not(&caps, KFDSYNC_CAP_DEADLINE, why, sizeof(why)) == 0 &&
	       !strcmp(why, "Linux 6.1 has no SYNC_IOC_SET_DEADLINE (Linux 6.4 brought it)"),
	       "caps_why_not_kernel (%s)", why);
	/* Not probed is not "not supported": the reason says which, and how to ask. */
	caps.unprobed = KFDSYNC_CAP_EVENTS;
	tap_ok(kfdsync_caps_why_not(&caps, KFDSYNC_CAP_EVENTS, why, sizeof(why)) == 0 &&
	       strstr(why, "not probed") && strstr(why, "KFDSYNC_CAPS_OPEN_KFD"),
	       "caps_why_not_unprobed (%s)", why);
	tap_ok(kfdsync_caps_why_not(&caps, KFDSYNC_CAP_MODULE_ABI, why, sizeof(why)) == 0 &&
	       strstr(why, "ABI 2") && kfdsync_caps_why_not(&caps, KFDSYNC_CAP_DISPATCH, why,
							    sizeof(why)) == 0 &&
	       strstr(why, "no event ages") && kfdsync_caps_why_not(&caps, KFDSYNC_CAP_HOOKS,
								     NULL, 0) == 0,
	       "caps_why_not_abi_and_dispatch (%s)", why);

	if (access("/dev/kfdsync", F_OK) == 0) {
		tap_skip("/dev/kfdsync exists here", "ctx_new_without_module");
		tap_skip("/dev/kfdsync exists here", "ctx_new_failure_leaves_out_untouched");
	} else {
		int ret = kfdsync_ctx_new(&ctx);

		tap_ok(ret == -ENOENT, "ctx_new_without_module (%d)", ret);
		tap_ok(ctx == NULL, "ctx_new_failure_leaves_out_untouched");
	}
	close(p[0]);
	close(p[1]);
	return tap_exit();
}
