// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening_memory: watched and written memory, and per-user limits.
 *
 * How this program works (see kfdsync_hardening.h): watched values and
 * import targets are the pages the process uses (a fresh anonymous page, a
 * private file mapping), and file-backed shared memory is refused; pins
 * are charged to RLIMIT_MEMLOCK, and contexts and timelines are limited per
 * user (an unprivileged child against root). Tests register themselves
 * (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "sim_test.h"
#include "kfdsync_hardening.h"

/* ---- watched and written memory is the process's own page ---- */

/* Export "value == 1" at @value, then write 1 and set the event. */
static int condition_after_write(volatile int64_t *value)
{
	HsaEvent *ev = registered_event();
	int fence, status;

	fence = raw_condition(kfdsync, ev->EventId, (const void *)value,
			      KFDSYNC_CONDITION_EQ, 1, raw_now_ns() + 3000 * MS);
	if (fence < 0) {
		status = fence;
	} else {
		*value = 1;
		hsaKmtSetEvent(ev);
		raw_wait(fence, 5000);
		status = raw_fence_status(fence);
		close(fence);
	}
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
	return status;
}

/* A fresh anonymous page (never written: the shared zero page). */
TEST(condition_on_fresh_anonymous_page)
{
	int64_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	tap_ret(condition_after_write(p), 1, "condition_fresh_anonymous_page_signals");
	munmap(p, 4096);
}

/* A private mapping of a file: the process's write makes its own copy. */
TEST(condition_on_private_file_mapping)
{
	int fd = memfd_create("kfdsync-private", MFD_CLOEXEC);
	int64_t zero = 0, *p;

	if (fd < 0 || pwrite(fd, &zero, sizeof(zero), 0) != sizeof(zero) ||
	    ftruncate(fd, 4096))
		tap_bail("memfd: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	tap_ret(condition_after_write(p), 1, "condition_private_file_mapping_signals");
	munmap(p, 4096);
	close(fd);
}

/*
 * Shared mappings of a real file (ramfs here: not shmem) are refused for
 * imports and conditions; shmem and anonymous memory are accepted.
 */
TEST(file_backed_memory_refused)
{
	const char *dir = "/tmp/kfdsync-ramfs";
	int tl, fence, fd, mfd;
	HsaEvent *ev = registered_event();
	uint64_t *file, *shm, anon = 0;

	mkdir(dir, 0700);
	if (mount("none", dir, "ramfs", 0, NULL))
		tap_bail("mount ramfs: %s", strerror(errno));
	fd = open("/tmp/kfdsync-ramfs/f", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	mfd = memfd_create("kfdsync-shm", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 4096) || mfd < 0 || ftruncate(mfd, 4096))
		tap_bail("files: %s", strerror(errno));
	file = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	fence = raw_tl_fence(tl, 1);

	tap_ret(raw_import_memory(kfdsync, fence, file, 1, 2), -EFAULT,
		"import_file_shared_mapping_efault");
	tap_ret(raw_condition(kfdsync, ev->EventId, file, KFDSYNC_CONDITION_EQ, 1, 0),
		-EFAULT, "condition_file_shared_mapping_efault");
	tap_ret(raw_import_memory(kfdsync, fence, shm, 1, 2), 0, "import_shmem_accepted");
	tap_ret(raw_import_memory(kfdsync, fence, &anon, 1, 2), 0, "import_anonymous_accepted");
	raw_tl_inc(tl, 1);
	for (int i = 0; i < 1000 && (*shm != 1 || anon != 1); i++)
		usleep(1000);
	tap_ok(*shm == 1 && anon == 1, "imports_written");

	close(fence);
	close(tl);
	munmap(file, 4096);
	munmap(shm, 4096);
	close(fd);
	close(mfd);
	umount(dir);
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
}

/* ---- per-user limits ---- */

/* As an unprivileged user with RLIMIT_MEMLOCK of 4 pages: 4 pins, then not. */
static int memlock_child(void *arg)
{
	struct rlimit rl = { 4 * 4096, 4 * 4096 };
	static uint64_t words[6][512];
	int ctx, tl, fence, i, ret;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 2;
	ctx = raw_open(RAW_KFDSYNC_DEV);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	if (ctx < 0 || tl < 0)
		return 3;
	fence = raw_tl_fence(tl, 1);
	for (i = 0; i < 4; i++)
		if (raw_import_memory(ctx, fence, &words[i][0], 1, 2))
			return 10 + i;
	ret = raw_import_memory(ctx, fence, &words[4][0], 1, 2);
	if (ret != -ENOMEM)
		return 20;
	/* The imports end: their pins go, and new ones fit again. */
	raw_tl_inc(tl, 1);
	for (i = 0; i < 1000 && words[3][0] != 1; i++)
		usleep(1000);
	usleep(50000);
	fence = raw_tl_fence(tl, 2);
	if (raw_import_memory(ctx, fence, &words[5][0], 1, 2))
		return 30;
	return 0;
}

TEST(pins_charged_to_memlock)
{
	nodes_for_everyone();
	tap_ret(as_user(NOBODY, memlock_child, NULL), 0,
		"pins_charged_to_rlimit_memlock");
}

/* Opens contexts (or timelines) up to the limit: 0 if the next gets EMFILE. */
static int open_limit_child(void *arg)
{
	const char *dev = arg;
	int fds[8], i, fd;

	for (i = 0; i < 4; i++) {
		fds[i] = raw_open(dev);
		if (fds[i] < 0)
			return 10 + i;
	}
	fd = raw_open(dev);
	return fd == -EMFILE ? 0 : 20;
}

static void per_user_limit(const char *param, const char *dev, const char *name)
{
	char saved[32] = "1024";
	int code, fd;

	kfdsync_param_read(param, saved, sizeof(saved));
	param_set(param, 4);
	code = as_user(NOBODY, open_limit_child, (void *)dev);
	/* Root is another user: unaffected while nobody sits at the limit. */
	fd = raw_open(dev);
	kfdsync_param_write(param, saved);
	tap_ret(code, 0, "%s_user_limit_emfile", name);
	tap_ok(fd >= 0, "%s_other_user_unaffected", name);
	if (fd >= 0)
		close(fd);
}

TEST(per_user_contexts_and_timelines)
{
	nodes_for_everyone();
	per_user_limit("max_user_contexts", RAW_KFDSYNC_DEV, "contexts");
	per_user_limit("max_user_timelines", KFDSYNC_TL_DEVICE, "timelines");
}

int main(int argc, char **argv)
{
	harness_require = hardening_require;
	harness_setup = hardening_setup;
	return harness_main(argc, argv);
}
