/* SPDX-License-Identifier: MIT */
/**
 * @file kfdsync_fence.h
 * @brief libkfdsync fence utilities: sync_files, CPU timelines, dma-bufs,
 * drm_syncobjs and amdgpu CS fences, whoever made the fence.
 *
 * What overlaps libsync and libdrm's syncobj calls, with the conventions of
 * <kfdsync.h> (negative errnos, one "not supported" errno, owned fds,
 * KFDSYNC_TIMEOUT_FOREVER / KFDSYNC_TIMEOUT_POLL, absolute deadlines). None
 * of these needs a context. kfdsync_sync_file(3), kfdsync_timeline(3) and
 * kfdsync_interop(3) have the detail. Link with `pkg-config --cflags --libs
 * kfdsync`.
 */
#ifndef KFDSYNC_FENCE_H
#define KFDSYNC_FENCE_H

#include <kfdsync.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup timeline CPU timelines
 * sw_sync-compatible timelines (/dev/kfdsync_timeline) for producers only
 * userspace can see: a CPU stage, a decoder, another device's completion.
 * A timeline counts up from 0; a fence for value V signals when the
 * timeline reaches V. Freeing the timeline signals its pending fences with
 * -ENOENT; the module's watchdog signals fences that wait too long with
 * -ETIMEDOUT.
 * @{
 */

/** A CPU timeline (opaque). */
struct kfdsync_timeline;

/**
 * Create a timeline, at value 0.
 *
 * @return 0, `-ENOENT` kfdsync.ko is not loaded, `-EACCES` no permission on
 *   /dev/kfdsync_timeline, `-ENFILE` the module's limit of timelines is
 *   reached, `-EINVAL` @p tl is NULL, or another negative errno.
 */
int kfdsync_timeline_new(struct kfdsync_timeline **tl);

/**
 * Free a timeline; its pending fences signal with -ENOENT. NULL is
 * accepted and ignored.
 */
void kfdsync_timeline_free(struct kfdsync_timeline *tl);

/**
 * A sync_file that signals when the timeline reaches @p value (already
 * signalled if it has). Asking twice for one value gives the same fence.
 *
 * @param name  name of the sync_file, at most 31 bytes; NULL for "kfdsync"
 * @return the sync_file fd (the caller closes it), `-ENOSPC` the timeline's
 *   limit of pending fences is reached, `-EINVAL` bad arguments (a name
 *   longer than 31 bytes), or another negative errno.
 */
int kfdsync_timeline_create_fence(struct kfdsync_timeline *tl, uint32_t value,
				  const char *name);

/**
 * Advance the timeline by @p step, signalling every fence it passes. As
 * with sw_sync, values are 32-bit and compared with wrap-around.
 *
 * @return 0, `-EINVAL` for NULL, or another negative errno.
 */
int kfdsync_timeline_inc(struct kfdsync_timeline *tl, uint32_t step);

/** @} */

/**
 * @defgroup sync_file sync_file utilities
 * These work on any sync_file, whoever made it.
 * @{
 */

/**
 * Is @p fd a sync_file?
 * @return 1 yes, 0 an open fd of another kind, `-EBADF` not an open fd.
 */
int kfdsync_sync_file_check(int fd);

/**
 * Merge two sync_files into a new one that signals when both have.
 *
 * @param name  name of the new sync_file, at most 31 bytes; NULL for
 *   "kfdsync-merge"
 * @return the new sync_file fd (the caller closes it), `-EINVAL` if the
 *   name is longer than 31 bytes (checked first) or either fd is not a
 *   sync_file, `-EBADF` if either is not open, or another negative errno.
 */
int kfdsync_sync_file_merge(const char *name, int fd1, int fd2);

/**
 * Wait until a sync_file ends, and say how.
 *
 * @param timeout_ns  relative timeout; negative waits forever, 0 only looks
 * @param[out] status  how it ended: 1 signalled, or the error it ended with
 *   (a -errno: -ETIMEDOUT for a kfdsync watchdog, -ECANCELED, -EIO, ...);
 *   0 (pending) with `-ETIME`. May be NULL.
 * @return 0 ended (see @p status), `-ETIME` timed out, `-EINVAL` not a
 *   sync_file, `-EBADF` not open, or another negative errno.
 */
int kfdsync_sync_file_wait_status(int fd, int64_t timeout_ns, int32_t *status);

/**
 * Wait until a sync_file ends; kfdsync_sync_file_wait_status() without the
 * status: 0 also when the fence ended with an error.
 */
int kfdsync_sync_file_wait(int fd, int64_t timeout_ns);

/** kfdsync_sync_file_wait_many(): wait until every fence has ended (else any one). */
#define KFDSYNC_WAIT_ALL (1u << 0)

/**
 * Wait on several sync_files at once, with one timeout for the whole wait
 * (the shape of drmSyncobjWait()): until any of them has ended, or with
 * KFDSYNC_WAIT_ALL until every one has. A fence that ended with an error
 * has ended; @p status says which did how.
 *
 * @param fds  @p count sync_files, borrowed
 * @param flags  0 (any) or KFDSYNC_WAIT_ALL
 * @param timeout_ns  for the whole wait; negative waits forever, 0 only
 *   looks
 * @param[out] status  @p count entries (may be NULL): 1 signalled, 0 still
 *   pending, or the -errno the fence ended with; filled in also with
 *   `-ETIME`
 * @return the number of fences that have ended (at least 1; @p count with
 *   KFDSYNC_WAIT_ALL), `-ETIME` the timeout passed first, `-EINVAL` bad
 *   arguments (NULL @p fds, @p count 0, unknown @p flags) or an fd that is
 *   not a sync_file, `-EBADF` one is not open, `-ENOMEM`, or another
 *   negative errno.
 */
int kfdsync_sync_file_wait_many(const int *fds, unsigned int count, uint32_t flags,
				int64_t timeout_ns, int32_t *status);

/** One fence inside a sync_file. 96 bytes, for good (see "Structs" in <kfdsync.h>). */
struct kfdsync_fence_status {
	char driver[32];       /**< driver that made it, e.g. "kfdsync", "vgem" */
	char timeline[32];     /**< its timeline's name */
	int32_t status;        /**< 1 signalled, 0 pending, < 0 error (-errno) */
	uint32_t pad;          /**< zeroed */
	uint64_t timestamp_ns; /**< CLOCK_MONOTONIC time it signalled, or 0 */
	uint64_t reserved[2];  /**< zeroed; room for later fields */
};

/** A sync_file as a whole. 64 bytes, for good (see "Structs" in <kfdsync.h>). */
struct kfdsync_sync_file_status {
	char name[32];       /**< the sync_file's name */
	int32_t status;      /**< 1 all signalled, 0 pending, < 0 an error */
	uint32_t num_fences; /**< fences it holds */
	uint32_t reserved[6]; /**< zeroed; room for later fields */
};

/**
 * Report a sync_file's state and, optionally, its fences.
 *
 * @param[out] st      the sync_file as a whole (may be NULL)
 * @param[out] fences  up to @p max_fences entries (may be NULL if
 *   @p max_fences is 0)
 * @return the number of fences in the sync_file (which may exceed
 *   @p max_fences: then only the first @p max_fences were filled in),
 *   `-EINVAL` not a sync_file or bad arguments, `-EBADF`, `-ENOMEM`, or
 *   another negative errno.
 */
int kfdsync_sync_file_get_status(int fd, struct kfdsync_sync_file_status *st,
				 struct kfdsync_fence_status *fences,
				 unsigned int max_fences);

/**
 * Add a sync_file to an accumulated fence, where -1 means "no fence yet"
 * (the shape of libdrm's sync_accumulate()): gather the fences a step must
 * wait for (several producers, the releases of several buffers) into one.
 *
 * If @p *acc is -1 it becomes a new descriptor of @p fd's sync_file (a
 * close-on-exec dup); otherwise a new sync_file that signals when both
 * have (kfdsync_sync_file_merge()) replaces @p *acc, and the previous
 * @p *acc is closed. A fence that ends with an error after the merge makes
 * the merged sync_file end with that error; but the kernel leaves fences
 * that have already signalled out of a merge, so the error of a fence that
 * had already failed is lost: then the return value is 1, and the caller
 * must carry the error itself.
 *
 * @param name  name of a merged sync_file (at most KFDSYNC_NAME_MAX bytes,
 *   checked first, also when no merge happens); NULL for "kfdsync-merge"
 * @param[in,out] acc  -1 or a sync_file fd owned by the caller, who closes
 *   the final one; on failure it is left unchanged (and still open)
 * @param fd  borrowed; may be closed as soon as this returns
 * @return 0; 1 if an input had already ended with an error that the merged
 *   sync_file therefore does not carry; `-EINVAL` @p acc is NULL, @p *acc
 *   is below -1, @p name is too long, or either fd is not a sync_file,
 *   `-EBADF` either is not open, or another negative errno.
 */
int kfdsync_sync_file_accumulate(const char *name, int *acc, int fd);

/**
 * Tell the fences of a sync_file when their consumer would like them
 * signalled (SYNC_IOC_SET_DEADLINE, Linux 6.4+): a compositor's next
 * vblank, say, so that a driver that supports deadlines can raise its
 * clocks. Only a hint: it never changes when or how a fence signals.
 * Fences whose driver has no deadline support ignore it, kfdsync's event
 * and HSA fences among them; kfdsync's CPU timeline fences keep the
 * earliest one for the timeline's producer (KFDSYNC_TL_IOC_GET_DEADLINE).
 * Setting one on a signalled fence is allowed and does nothing.
 *
 * @param deadline_ns  absolute CLOCK_MONOTONIC time, in nanoseconds (not a
 *   relative timeout: clock_gettime(CLOCK_MONOTONIC) plus the time left)
 * @return 0, `-EINVAL` not a sync_file, `-EBADF` not open, `-EOPNOTSUPP`
 *   the kernel is older than 6.4, or another negative errno.
 */
int kfdsync_sync_file_set_deadline(int fd, uint64_t deadline_ns);

/** @} */

/**
 * @defgroup dmabuf dma-buf implicit sync
 * Move fences between a sync_file and a dma-buf's reservation object
 * (DMA_BUF_IOCTL_EXPORT_SYNC_FILE / IMPORT_SYNC_FILE, Linux 6.0+). This is
 * how a fence reaches compositors and drivers that use implicit sync.
 * @{
 */

/** Access a dma-buf fence is for: wait for writers only. */
#define KFDSYNC_DMABUF_READ  (1u << 0)
/** Access a dma-buf fence is for: wait for readers and writers. */
#define KFDSYNC_DMABUF_WRITE (1u << 1)

/**
 * A sync_file of the fences a reader (KFDSYNC_DMABUF_READ) or a writer
 * (KFDSYNC_DMABUF_WRITE) of the buffer would wait for now.
 *
 * @return the sync_file fd (the caller closes it), `-EINVAL` for bad flags
 *   or if @p dmabuf_fd is not a dma-buf, `-EOPNOTSUPP` the kernel is older
 *   than 6.0, or another negative errno.
 */
int kfdsync_dmabuf_export_sync_file(int dmabuf_fd, uint32_t flags);

/**
 * Add a sync_file's fences to a dma-buf: with KFDSYNC_DMABUF_WRITE as a
 * write (everyone waits), with KFDSYNC_DMABUF_READ as a read (writers wait).
 *
 * @return 0, `-EINVAL` for bad flags, a non-sync_file, or if @p dmabuf_fd
 *   is not a dma-buf, `-EOPNOTSUPP` the kernel is older than 6.0, or
 *   another negative errno.
 */
int kfdsync_dmabuf_import_sync_file(int dmabuf_fd, int sync_file_fd,
				    uint32_t flags);

/** @} */

/**
 * @defgroup syncobj drm_syncobj
 * Move fences between sync_files and drm_syncobjs on a DRM device fd
 * (libdrm). Timeline points go through a temporary binary syncobj.
 * @{
 */

/**
 * Put a sync_file's fence into a syncobj: replace a binary syncobj's fence
 * (@p point 0), or add it as timeline point @p point.
 *
 * @return 0, `-EOPNOTSUPP` if the device has no (timeline) syncobjs,
 *   `-ENOENT` no such handle, `-EINVAL` not a sync_file, or another negative
 *   errno.
 */
int kfdsync_syncobj_import_sync_file(int drm_fd, uint32_t handle,
				     uint64_t point, int sync_file_fd);

/**
 * A sync_file for a binary syncobj's fence (@p point 0) or a timeline
 * point.
 *
 * @return the sync_file fd (the caller closes it), `-EOPNOTSUPP` as above,
 *   `-ENOENT` no such handle, `-EINVAL` no fence there yet, or another
 *   negative errno.
 */
int kfdsync_syncobj_export_sync_file(int drm_fd, uint32_t handle,
				     uint64_t point);

/** kfdsync_syncobj_eventfd(): when a fence is attached, not when it signals. */
#define KFDSYNC_SYNCOBJ_WAIT_AVAILABLE (1u << 0)

/**
 * Signal an eventfd (add 1) when a timeline point of a syncobj signals
 * (DRM_IOCTL_SYNCOBJ_EVENTFD, Linux 6.6+): a poll(2)-able wait for, say, a
 * compositor's wp_linux_drm_syncobj_v1 release point, with no thread
 * blocked in DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT.
 *
 * With KFDSYNC_SYNCOBJ_WAIT_AVAILABLE the eventfd is signalled as soon as
 * a fence is attached to the point, pending or not: then
 * kfdsync_syncobj_export_sync_file() can turn it into a sync_file (e.g.
 * for kfdsync_import_to_memory(), so a GPU queue waits for it instead of
 * the CPU). The eventfd is signalled once, at once if the point is there
 * already; a point that never comes never signals it (a fence attached
 * later to a lower point does not either). A fence that ends with an error
 * counts as signalled.
 *
 * @param handle  a syncobj of @p drm_fd; @p point 0 means a binary
 *   syncobj's fence
 * @param flags  0 or KFDSYNC_SYNCOBJ_WAIT_AVAILABLE
 * @param eventfd  an eventfd(2), borrowed: the kernel takes its own
 *   reference until it signals it or the syncobj is destroyed
 * @return 0, `-EINVAL` bad @p flags or @p eventfd is not an eventfd,
 *   `-EBADF` @p eventfd is not open, `-ENOENT` no such handle,
 *   `-EOPNOTSUPP` the device has no timeline syncobjs (or @p drm_fd is not
 *   a DRM device) or the kernel is older than 6.6, or another negative
 *   errno.
 */
int kfdsync_syncobj_eventfd(int drm_fd, uint32_t handle, uint64_t point,
			    uint32_t flags, int eventfd);

/** @} */


/**
 * @defgroup amdgpu amdgpu command submissions (libdrm_amdgpu)
 * Fences of the amdgpu graphics/compute command submission path (not KFD):
 * a CS fence as a sync_file, and a sync_file as a syncobj that a CS waits
 * on (an AMDGPU_CHUNK_ID_SYNCOBJ_IN dependency of amdgpu_cs_submit_raw2()).
 * @p dev is libdrm_amdgpu's amdgpu_device_handle; include <amdgpu.h> for
 * it. These functions are built and their argument checks tested, but not
 * tested on amdgpu hardware (the project's test machines have none).
 * A libkfdsync built without libdrm_amdgpu returns `-EOPNOTSUPP` from them.
 * @{
 */

struct amdgpu_device;	/* libdrm_amdgpu's amdgpu_device_handle points to one */
struct amdgpu_cs_fence;

/**
 * A sync_file for an amdgpu CS fence (amdgpu_cs_fence_to_handle(),
 * AMDGPU_FENCE_TO_HANDLE_GET_SYNC_FILE_FD).
 *
 * @param fence  the submission's fence, as amdgpu_cs_submit() filled in
 *   its context, ip_type, ring and fence (sequence number)
 * @return the sync_file fd (the caller closes it), `-EINVAL` @p dev or
 *   @p fence (or its context) is NULL, `-EOPNOTSUPP` no libdrm_amdgpu, or
 *   another negative errno from amdgpu (e.g. `-ENOENT` no such context).
 */
int kfdsync_amdgpu_fence_export_sync_file(struct amdgpu_device *dev,
					  const struct amdgpu_cs_fence *fence);

/**
 * A new binary syncobj of @p dev holding @p sync_file_fd's fence, for a
 * command submission to wait on. The caller destroys it with
 * amdgpu_cs_destroy_syncobj().
 *
 * @param sync_file_fd  borrowed; checked before @p dev is used
 * @param[out] syncobj  the new syncobj handle
 * @return 0, `-EINVAL` NULL @p dev or @p syncobj, or @p sync_file_fd is not
 *   a sync_file, `-EBADF` it is not open, `-EOPNOTSUPP` no libdrm_amdgpu,
 *   or another negative errno from amdgpu.
 */
int kfdsync_amdgpu_syncobj_from_sync_file(struct amdgpu_device *dev,
					  int sync_file_fd, uint32_t *syncobj);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* KFDSYNC_FENCE_H */
