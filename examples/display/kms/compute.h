/* SPDX-License-Identifier: MIT */
/*
 * compute.h - the compute side of kfdsync-kms: a queue that runs a PM4
 * command stream, and the memory it reads and writes.
 *
 * Two back-ends run the same PM4 stream (built with pm4.h):
 *
 *  - "sim": kfdsim, the test rig's simulated GPU (sim/). Its queues
 *    execute PM4 packets in the process's address space from a kernel
 *    thread and signal KFD events through amdkfd's real interrupt path, so
 *    "GPU addresses" are the process's own pointers. This is what runs in
 *    the project's QEMU guest, which has no GPU.
 *  - "real": a KFD compute queue (hsaKmtCreateQueue()) on an AMD GPU. The
 *    dumb buffer is imported into KFD from its dma-buf; the gate word is
 *    registered user memory. NOT TESTED ON HARDWARE: it is written from
 *    libhsakmt's and amdkfd's interfaces and compiled, but this project
 *    has no GPU to run it on.
 *
 * Functions return 0 or a negative errno, and print what failed.
 */
#ifndef KFDSYNC_KMS_COMPUTE_H
#define KFDSYNC_KMS_COMPUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pm4.h"

struct buffer;

enum gpu_kind {
	GPU_SIM,
	GPU_REAL,
};

struct gpu;

/*
 * Open the back-end. gpu_close() stops the queue (also in the middle of a
 * hang or a WAIT_REG_MEM) and releases everything; NULL is ignored. libhsakmt must be open (hsaKmtOpenKFD()): queues signal
 * the caller's KFD events.
 */
int gpu_open(struct gpu **gpu, enum gpu_kind kind);
void gpu_close(struct gpu *gpu);
const char *gpu_name(const struct gpu *gpu);

/*
 * Make @size bytes at @cpu (page-aligned ordinary memory) accessible to the
 * queue; *@va gets the address packets use for it. The mapping lasts until
 * gpu_close(), which must come before the memory is freed.
 */
int gpu_map_memory(struct gpu *gpu, void *cpu, size_t size, uint64_t *va);

/*
 * The same for a scanout buffer (the real back-end needs its dma-buf). The
 * mapping lasts until gpu_close(), which must come before the buffer's
 * destruction.
 */
int gpu_map_buffer(struct gpu *gpu, struct buffer *b, uint64_t *va);

/*
 * Append a command stream to the queue. *@end_pos gets the queue position
 * just past it (positions count the dwords ever submitted).
 */
int gpu_submit(struct gpu *gpu, const struct pm4_buf *b, uint64_t *end_pos);

/*
 * Wait until the queue has executed up to @pos, at most @timeout_ms.
 * -ETIMEDOUT, -EIO if the queue failed, -EOPNOTSUPP if the back-end cannot
 * tell (then callers rely on fences alone).
 */
int gpu_wait_pos(struct gpu *gpu, uint64_t pos, int timeout_ms);

#endif /* KFDSYNC_KMS_COMPUTE_H */
