// SPDX-License-Identifier: MIT
/*
 * bridge_udmabuf - libkfdsync's dma-buf implicit-sync functions on udmabuf:
 * a dma-buf made from a memfd (/dev/udmabuf, UDMABUF_CREATE), the kind a
 * CPU producer hands to a compositor. Fences come from a kfdsync CPU
 * timeline, so the test decides when each one signals and checks that the
 * buffer's readers and writers wait for exactly the right fences:
 *
 *   a write fence: readers and writers wait for it;
 *   a read fence:  writers wait for it, readers do not.
 *
 * Without /dev/udmabuf (a kernel built without it) every subtest is skipped
 * with that reason.
 */
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kfdsync.h"
#include "tap.h"

#define MS 1000000LL
#define PLAN 12

/* A dma-buf of @size bytes over a sealed memfd; fd or -errno. */
static int udmabuf_new(int dev, size_t size)
{
	struct udmabuf_create arg = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	int memfd, fd;

	memfd = memfd_create("bridge-udmabuf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0)
		return -errno;
	/* udmabuf wants a memfd that cannot shrink under the buffer. */
	if (ftruncate(memfd, (off_t)size) || fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		close(memfd);
		return -errno;
	}
	arg.memfd = (uint32_t)memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &arg);
	fd = fd < 0 ? -errno : fd;
	close(memfd);	/* the dma-buf holds the pages */
	return fd;
}

/* 1 signalled, 0 pending, < 0 error, of what a reader/writer would wait for. */
static int32_t waits_for(int buf, unsigned int access)
{
	struct kfdsync_sync_file_status st = { .status = 99 };
	int fd = kfdsync_dmabuf_export_sync_file(buf, access);

	if (fd < 0)
		return fd - 1000;	/* out of the status range: fails every check */
	kfdsync_sync_file_get_status(fd, &st, NULL, 0);
	close(fd);
	return st.status;
}

int main(void)
{
	struct kfdsync_timeline *tl = NULL;
	int dev, buf, p[2], f1 = -1, f2 = -1, fd, ret;
	int32_t r, w;

	tap_plan(PLAN);
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		for (int i = 0; i < PLAN; i++)
			tap_skip("no /dev/udmabuf in this kernel (CONFIG_UDMABUF)", "udmabuf_%d", i);
		return tap_exit();
	}
	if (pipe2(p, O_CLOEXEC))
		tap_bail("pipe2");
	buf = udmabuf_new(dev, 4 * (size_t)getpagesize());
	tap_ok(buf >= 0 && (fcntl(buf, F_GETFD) & FD_CLOEXEC), "udmabuf_create (%d)", buf);
	if (buf < 0)
		tap_bail("cannot create a udmabuf");

	/* A fresh buffer has no fences: both exports are born signalled. */
	fd = kfdsync_dmabuf_export_sync_file(buf, KFDSYNC_DMABUF_READ | KFDSYNC_DMABUF_WRITE);
	tap_ok(fd >= 0 && kfdsync_sync_file_check(fd) == 1 && kfdsync_sync_file_wait(fd, 0) == 0,
	       "export_idle_buffer_signalled");
	if (fd >= 0)
		close(fd);

	if (kfdsync_timeline_new(&tl))
		tap_bail("no kfdsync timeline");
	f1 = kfdsync_timeline_create_fence(tl, 1, "write");
	f2 = kfdsync_timeline_create_fence(tl, 2, "read");

	/* A pending write: readers and writers wait for it. */
	ret = kfdsync_dmabuf_import_sync_file(buf, f1, KFDSYNC_DMABUF_WRITE);
	r = waits_for(buf, KFDSYNC_DMABUF_READ);
	w = waits_for(buf, KFDSYNC_DMABUF_WRITE);
	tap_ok(ret == 0 && r == 0 && w == 0, "write_fence_blocks_readers_and_writers (%d %d %d)",
	       ret, r, w);
	fd = kfdsync_dmabuf_export_sync_file(buf, KFDSYNC_DMABUF_READ);
	tap_ok(fd >= 0 && kfdsync_sync_file_wait(fd, 0) == -ETIME, "exported_fence_pending");
	tap_ok(kfdsync_timeline_inc(tl, 1) == 0 && fd >= 0 &&
	       kfdsync_sync_file_wait(fd, 10000 * MS) == 0, "exported_fence_signals_with_write");
	if (fd >= 0)
		close(fd);
	r = waits_for(buf, KFDSYNC_DMABUF_READ);
	w = waits_for(buf, KFDSYNC_DMABUF_WRITE);
	tap_ok(r == 1 && w == 1, "write_done_nothing_to_wait_for (%d %d)", r, w);

	/* A pending read: writers wait for it, readers do not. */
	ret = kfdsync_dmabuf_import_sync_file(buf, f2, KFDSYNC_DMABUF_READ);
	r = waits_for(buf, KFDSYNC_DMABUF_READ);
	w = waits_for(buf, KFDSYNC_DMABUF_WRITE);
	tap_ok(ret == 0 && r == 1 && w == 0, "read_fence_blocks_writers_only (%d %d %d)",
	       ret, r, w);
	tap_ok(kfdsync_timeline_inc(tl, 1) == 0 && waits_for(buf, KFDSYNC_DMABUF_WRITE) == 1,
	       "read_done_writers_proceed");

	/* An error fence (timeline freed: -ENOENT) reaches the buffer's waiters. */
	close(f1);
	f1 = kfdsync_timeline_create_fence(tl, 3, "doomed");
	ret = kfdsync_dmabuf_import_sync_file(buf, f1, KFDSYNC_DMABUF_WRITE);
	fd = kfdsync_dmabuf_export_sync_file(buf, KFDSYNC_DMABUF_READ);
	kfdsync_timeline_free(tl);
	tl = NULL;
	r = 99;
	if (fd >= 0 && kfdsync_sync_file_wait(fd, 10000 * MS) == 0) {
		struct kfdsync_sync_file_status st;

		r = kfdsync_sync_file_get_status(fd, &st, NULL, 0) >= 0 ? st.status : 98;
	}
	tap_ok(ret == 0 && r == -ENOENT, "error_fence_reaches_readers (%d)", r);
	if (fd >= 0)
		close(fd);

	/* Bad input. */
	tap_ok(kfdsync_dmabuf_import_sync_file(buf, p[0], KFDSYNC_DMABUF_WRITE) == -EINVAL,
	       "import_non_sync_file_einval");
	tap_ok(kfdsync_dmabuf_export_sync_file(buf, 0) == -EINVAL &&
	       kfdsync_dmabuf_import_sync_file(buf, f2, 4) == -EINVAL, "bad_flags_einval");
	tap_ok(kfdsync_dmabuf_export_sync_file(dev, KFDSYNC_DMABUF_READ) == -EINVAL,
	       "udmabuf_device_is_not_a_dmabuf_einval");

	close(f1);
	close(f2);
	close(buf);
	close(dev);
	close(p[0]);
	close(p[1]);
	return tap_exit();
}
