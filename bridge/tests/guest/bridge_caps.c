// SPDX-License-Identifier: MIT
/*
 * bridge_caps - kfdsync_get_caps() (kfdsync_caps(3)), with the hooks and, as
 * bridge_caps_relay, in forced relay mode:
 *
 * - cheap: asked before any context, with no flags, it opens no /dev/kfd
 *   (the process does not become an amdkfd process: no
 *   /sys/class/kfd/kfd/proc/<pid>) and says which bits it did not probe;
 *   with KFDSYNC_CAPS_OPEN_KFD it does, and then probes them;
 * - true: every bit against what this program finds out for itself (the
 *   module's mode, amdkfd's event ages, the devices, the kernel's release
 *   for the kernel features), and a context's answer is the same as the
 *   answer before it;
 * - a missing kernel feature fails with -EOPNOTSUPP.
 *
 * The process opens /dev/kfd itself only after the first check.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kfd_raw.h"
#include "kfdsync.h"
#include "sim_test.h"
#include "tap.h"

static bool amdkfd_process(void)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/class/kfd/kfd/proc/%d", (int)getpid());
	return !stat(path, &st);
}

static bool kfd_fd_open(void)
{
	for (int fd = 0; fd < 1024; fd++) {
		char path[64], target[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			if (!strcmp(target, "/dev/kfd"))
				return true;
		}
	}
	return false;
}

/* Render nodes: any at all, any with (timeline) syncobjs. */
static void render_nodes(bool *any, bool *syncobj, bool *timeline)
{
	*any = *syncobj = *timeline = false;
	for (int minor = 128; minor < 192; minor++) {
		char path[32];
		uint64_t cap;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		*any = true;
		if (!drmGetCap(fd, DRM_CAP_SYNCOBJ, &cap) && cap)
			*syncobj = true;
		if (!drmGetCap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) && cap)
			*timeline = true;
		close(fd);
	}
}

static uint32_t kernel_version(void)
{
	struct utsname u;
	unsigned int a = 0, b = 0;

	uname(&u);
	sscanf(u.release, "%u.%u", &a, &b);
	return (a << 16) | (b << 8);
}

#define HAS(c, bit) (!!((c).supported & (bit)))

int main(void)
{
	struct kfdsync_caps before, asked, ctx_caps;
	struct kfdsync_module_info mi;
	struct kfdsync_ctx *ctx;
	bool relay_mode, ages, any, syncobj, timeline, tl_open, unknown_ok;
	uint32_t kv = kernel_version();
	char why[256], why2[256];
	int ret, kfd, fd;

	scrub_hsa_env();
	require_sim_guest();
	tap_plan(9);
	if (amdkfd_process())
		tap_bail("an amdkfd process before anything ran");

	/* Before any context, no flags: no /dev/kfd. */
	ret = kfdsync_get_caps(NULL, 0, &before);
	kfdsync_caps_why_not(&before, KFDSYNC_CAP_EVENTS, why, sizeof(why));
	tap_ok(!ret && !amdkfd_process() && !kfd_fd_open() &&
	       (before.unprobed & KFDSYNC_CAP_EVENTS) && !HAS(before, KFDSYNC_CAP_EVENTS) &&
	       strstr(why, "KFDSYNC_CAPS_OPEN_KFD"),
	       "caps_open_no_kfd_unless_asked (%d, unprobed %#x: %s)", ret, before.unprobed, why);
	unknown_ok = kfdsync_get_caps(NULL, 2, &asked) == -EINVAL;

	/* Asked to: it opens /dev/kfd, and probes what needs it. */
	ret = kfdsync_get_caps(NULL, KFDSYNC_CAPS_OPEN_KFD, &asked);
	tap_ok(!ret && amdkfd_process() && !kfd_fd_open() && HAS(asked, KFDSYNC_CAP_EVENTS) &&
	       asked.kfd_version && !(asked.unprobed & (KFDSYNC_CAP_EVENTS | KFDSYNC_CAP_DISPATCH)) &&
	       unknown_ok, "caps_open_kfd_when_asked (KFD %u.%u, unprobed %#x, unknown flag %s)",
	       asked.kfd_version >> 16, asked.kfd_version & 0xffff, asked.unprobed,
	       unknown_ok ? "refused" : "accepted");

	if (kfdsync_ctx_new(&ctx) || kfdsync_ctx_get_module_info(ctx, &mi))
		tap_bail("kfdsync context");
	relay_mode = mi.flags & KFDSYNC_INFO_RELAY_FORCED;
	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	ages = kfd >= 0 && kfd_raw_has_event_age(kfd);
	tap_diag("kfdsync in %s mode, amdkfd %s event ages, Linux %u.%u", relay_mode ? "relay" :
		 "hooks", ages ? "with" : "without", kv >> 16, (kv >> 8) & 0xff);

	/* A context's answer (an amdkfd process now: probed anyway) is the same. */
	ret = kfdsync_ctx_get_caps(ctx, &ctx_caps);
	tap_ok(!ret && ctx_caps.supported == asked.supported && ctx_caps.unprobed == asked.unprobed,
	       "caps_before_a_context_as_with_one (%#x, %#x)", asked.supported, ctx_caps.supported);

	/* Each bit against this program's own findings. */
	tap_ok(HAS(asked, KFDSYNC_CAP_HOOKS) == !relay_mode &&
	       HAS(asked, KFDSYNC_CAP_DISPATCH) == (HAS(asked, KFDSYNC_CAP_HOOKS_WATCH) || ages) &&
	       (!relay_mode || !HAS(asked, KFDSYNC_CAP_HOOKS_WATCH)),
	       "caps_%s_source_and_dispatch (%#x)", relay_mode ? "relay" : "hooks", asked.supported);
	fd = open("/dev/kfdsync_timeline", O_RDWR | O_CLOEXEC);
	tl_open = fd >= 0;
	if (fd >= 0)
		close(fd);
	tap_ok(HAS(asked, KFDSYNC_CAP_MODULE_ABI) && HAS(asked, KFDSYNC_CAP_HSA) &&
	       HAS(asked, KFDSYNC_CAP_IMPORT) && HAS(asked, KFDSYNC_CAP_TIMELINES) == tl_open,
	       "caps_module_features (%#x)", asked.supported);
	kfdsync_caps_why_not(&asked, KFDSYNC_CAP_DEADLINE, why, sizeof(why));
	kfdsync_caps_why_not(&asked, KFDSYNC_CAP_DMABUF, why2, sizeof(why2));
	/* A dma-buf to ask for is found in the test guest (udmabuf, or vgem's dumb buffers). */
	tap_ok(!(asked.unprobed & (KFDSYNC_CAP_DEADLINE | KFDSYNC_CAP_DMABUF)) &&
	       HAS(asked, KFDSYNC_CAP_DEADLINE) == (kv >= 0x060400) &&
	       HAS(asked, KFDSYNC_CAP_DMABUF) == (kv >= 0x060000),
	       "caps_kernel_features_probed (deadline: %s; dma-buf: %s)",
	       why[0] ? why : "yes", why2[0] ? why2 : "yes");
	render_nodes(&any, &syncobj, &timeline);
	kfdsync_caps_why_not(&asked, KFDSYNC_CAP_SYNCOBJ_EVENTFD, why, sizeof(why));
	tap_ok(any ? !(asked.unprobed & (KFDSYNC_CAP_SYNCOBJ | KFDSYNC_CAP_SYNCOBJ_EVENTFD)) &&
		     HAS(asked, KFDSYNC_CAP_SYNCOBJ) == syncobj &&
		     HAS(asked, KFDSYNC_CAP_SYNCOBJ_EVENTFD) == (timeline && kv >= 0x060600) :
		     (asked.unprobed & KFDSYNC_CAP_SYNCOBJ) && !HAS(asked, KFDSYNC_CAP_SYNCOBJ) &&
		     strstr(why, "render node"),
	       "caps_syncobj_probed_not_assumed (render node %s, syncobjs %s: %s)",
	       any ? "yes" : "no", syncobj ? "yes" : "no", why[0] ? why : "eventfd yes");

	/* What a missing kernel feature makes fail: -EOPNOTSUPP. */
	if (!HAS(asked, KFDSYNC_CAP_DEADLINE)) {
		struct kfdsync_timeline *tl;
		int f;

		kfdsync_timeline_new(&tl);
		f = kfdsync_timeline_create_fence(tl, 1, NULL);
		tap_ok(kfdsync_sync_file_set_deadline(f, 1) == -EOPNOTSUPP,
		       "caps_missing_deadline_is_eopnotsupp");
		close(f);
		kfdsync_timeline_free(tl);
	} else {
		tap_skip("the kernel has deadlines", "caps_missing_deadline_is_eopnotsupp");
	}
	/* A context of the threads form: the dispatch interval is not supported. */
	tap_ok(kfdsync_ctx_set_dispatch_interval(ctx, 1000000) == -EOPNOTSUPP,
	       "caps_threads_form_dispatch_interval_eopnotsupp");
	if (kfd >= 0)
		close(kfd);
	kfdsync_ctx_free(ctx);
	return tap_exit();
}
