/* SPDX-License-Identifier: MIT */
/*
 * compute.h - the one compute stage of the examples (kfdsync-kms,
 * kfdsync-wayland, and through sim_stage.h kfdsync-egl and kfdsync-vulkan):
 * a queue that runs a PM4 command stream, the memory it reads and writes,
 * and a frame's job on it (stage_submit()): wait for a gate, draw, take the
 * compute time, signal a KFD event that kfdsync exports as the frame's
 * fence.
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
 *    has no GPU to run it on. Built only where libhsakmt's header is
 *    found (not on Debian forky and later, which have no libhsakmt).
 *
 * Functions return 0 or a negative errno, and print what failed.
 */
#ifndef KFDSYNC_EXAMPLES_COMPUTE_H
#define KFDSYNC_EXAMPLES_COMPUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "pm4.h"

struct kfdsync_ctx;

/*
 * Written into a gate (by kfdsync_import_to_memory()) when the fence that
 * opens it ended with an error: it opens the gate all the same (a queue
 * never waits forever), and the job that passed it can tell.
 */
#define GATE_ERROR UINT32_MAX

struct gpu;

/*
 * Open the back-end. gpu_close() stops the queue (also in the middle of a
 * hang or a WAIT_REG_MEM) and releases everything; NULL is ignored. /dev/kfd must be open (kfd_open() of the same kind):
 * queues signal the caller's KFD events.
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
 * The same for a display's buffer, mapped for the CPU at @map (the real
 * back-end imports its dma-buf @dmabuf_fd). The mapping lasts until
 * gpu_close(), which must come before the buffer's destruction.
 */
int gpu_map_buffer(struct gpu *gpu, void *map, int dmabuf_fd, uint64_t *va);

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

/* ---- a frame's job ---- */

/* A KFD signal event that jobs signal, registered with a kfdsync context. */
struct stage_event {
	struct kfd_event event;
	uint64_t signals;	/* RELEASE_MEMs on it submitted so far */
};

/*
 * Create the event and register it with @ctx (kfd_signal_event_new()).
 * 0 or -errno after an err(); stage_event_free() undoes it either way.
 */
int stage_event_new(struct kfdsync_ctx *ctx, struct stage_event *ev);
/* Unregister (the header's rule: before destroying it) and destroy. */
void stage_event_free(struct kfdsync_ctx *ctx, struct stage_event *ev);

/* What the queue records about a job, for the programs' traces. */
struct stage_stamp {
	uint64_t frame;		/* WRITE_DATA: the job's frame */
	uint64_t gate_seen;	/* the gate as the queue passed it */
	uint64_t start_ns;	/* RELEASE_MEM timestamp right after the gate */
};

/* One frame's job: stage_submit(). Zero what you do not use. */
struct stage_job {
	unsigned int n;		/* the frame, for messages and the stamp */
	uint64_t gate_va;	/* 0, or wait until the 64-bit word there is >= @gate_min */
	uint64_t gate_min;
	uint64_t stamp_va;	/* 0, or where the queue writes a struct stage_stamp */
	/* Append the frame's drawing (PM4 packets) to @b, or NULL. */
	void (*draw)(struct pm4_buf *b, void *arg);
	void *arg;
	/*
	 * Draw after the compute time. By default the pixels go in first, so
	 * that the buffer holds the whole new frame while its fence is still
	 * pending: a consumer that did not wait would show it.
	 */
	bool draw_last;
	unsigned int busy_ms;	/* the simulated compute time (a NOP on hardware) */
	bool hang;		/* test hook: the job never finishes */
	int64_t watchdog_ns;	/* the fence's watchdog (0: the module's) */
	/* Out: queue position once drawn, CLOCK_MONOTONIC at submission. */
	uint64_t draw_end;
	int64_t submit_ns;
};

/*
 * Submit @job, ending in a RELEASE_MEM on @ev, and export that signal as
 * the frame's fence: "the next signal of @ev after its age now". Every
 * earlier job on @ev must have signalled (checked: the age must count all
 * of them), so that the signal is this job's. Returns the fence (a
 * sync_file, the caller's) or -errno after an err().
 */
int stage_submit(struct gpu *gpu, struct kfdsync_ctx *ctx, struct stage_event *ev,
		 struct stage_job *job);

#endif /* KFDSYNC_EXAMPLES_COMPUTE_H */
