// SPDX-License-Identifier: MIT
/*
 * compute.c - the examples' compute stage: two back-ends and a frame's
 * job (see compute.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef KFDSYNC_HAVE_HSAKMT
#include <hsakmt.h>
#endif
#include <kfdsync.h>

#include "common.h"
#include "compute.h"
#include "kfdsim.h"

/* Ring size of either back-end, in dwords: room for a few frames' packets. */
#define RING_DWORDS	65536u

struct gpu {
	enum gpu_kind kind;

	/* sim */
	int sim_fd;
	uint32_t sim_queue;

#ifdef KFDSYNC_HAVE_HSAKMT
	/* real (not tested on hardware) */
	uint32_t node;			/* KFD node of the GPU */
	uint32_t *ring;			/* hsaKmtAllocMemory, host-visible */
	HsaQueueResource queue;		/* ids, doorbell, read/write pointers */
	bool queue_created;
	uint64_t wptr;			/* dwords ever written to the ring */
	void *mapped[8];		/* memory and buffers mapped to the GPU */
	unsigned int num_mapped;
#endif
};

/* ---- sim: the test rig's simulated GPU ---- */

static int sim_open(struct gpu *g)
{
	int ret;

	g->sim_fd = kfdsim_open();
	if (g->sim_fd < 0) {
		err("cannot open %s: %s (the GPU simulator kfdsim.ko is loaded only in "
		    "the project's test guest; on an AMD GPU use --gpu real)",
		    KFDSIM_DEVICE, strerror(-g->sim_fd));
		return g->sim_fd;
	}
	ret = kfdsim_queue_create(g->sim_fd, RING_DWORDS, &g->sim_queue, NULL);
	if (ret) {
		err("cannot create a simulated queue: %s", strerror(-ret));
		close(g->sim_fd);
		g->sim_fd = -1;
	}
	return ret;
}

static void sim_close(struct gpu *g)
{
	if (g->sim_fd < 0)
		return;
	/* Destroying the queue stops it, also inside a hang or a long wait. */
	kfdsim_queue_destroy(g->sim_fd, g->sim_queue);
	close(g->sim_fd);
	g->sim_fd = -1;
}

#ifdef KFDSYNC_HAVE_HSAKMT
/* ---- real: a KFD compute queue (NOT TESTED ON HARDWARE) ---- */

static int real_find_gpu(struct gpu *g)
{
	HsaSystemProperties sys;
	HsaNodeProperties node;

	if (hsaKmtAcquireSystemProperties(&sys) != HSAKMT_STATUS_SUCCESS) {
		err("--gpu real: hsaKmtAcquireSystemProperties failed");
		return -EIO;
	}
	for (uint32_t i = 0; i < sys.NumNodes; i++) {
		if (hsaKmtGetNodeProperties(i, &node) == HSAKMT_STATUS_SUCCESS &&
		    node.NumFComputeCores) {
			g->node = i;
			return 0;
		}
	}
	err("--gpu real: amdkfd reports %u node(s) and none is a GPU: there is no AMD "
	    "GPU here (in the test guest use --gpu sim). Note: the real-GPU path is "
	    "compiled but has not been tested on hardware.", sys.NumNodes);
	return -ENODEV;
}

static int real_open(struct gpu *g)
{
	HsaMemFlags flags = { 0 };
	HsaMemFlags *f = &flags;
	uint64_t va;
	int ret;

	ret = real_find_gpu(g);
	if (ret)
		return ret;
	/* A host-visible, GPU-executable ring, as kfdtest allocates PM4 rings. */
	f->ui32.HostAccess = 1;
	f->ui32.ExecuteAccess = 1;
	f->ui32.NoNUMABind = 1;
	f->ui32.PageSize = HSA_PAGE_SIZE_4KB;
	if (hsaKmtAllocMemory(g->node, RING_DWORDS * 4, flags, (void **)&g->ring) !=
	    HSAKMT_STATUS_SUCCESS) {
		err("--gpu real: cannot allocate the queue's ring");
		return -ENOMEM;
	}
	if (hsaKmtMapMemoryToGPU(g->ring, RING_DWORDS * 4, &va) != HSAKMT_STATUS_SUCCESS) {
		err("--gpu real: cannot map the ring to the GPU");
		return -EIO;
	}
	memset(g->ring, 0, RING_DWORDS * 4);
	if (hsaKmtCreateQueue(g->node, HSA_QUEUE_COMPUTE, 100, HSA_QUEUE_PRIORITY_NORMAL,
			      g->ring, RING_DWORDS * 4, NULL, &g->queue) !=
	    HSAKMT_STATUS_SUCCESS) {
		err("--gpu real: hsaKmtCreateQueue failed");
		return -EIO;
	}
	g->queue_created = true;
	return 0;
}

static void real_close(struct gpu *g)
{
	if (g->queue_created)
		hsaKmtDestroyQueue(g->queue.QueueId);
	g->queue_created = false;
	for (unsigned int i = 0; i < g->num_mapped; i++) {
		hsaKmtUnmapMemoryToGPU(g->mapped[i]);
		hsaKmtDeregisterMemory(g->mapped[i]);
	}
	g->num_mapped = 0;
	if (g->ring) {
		hsaKmtUnmapMemoryToGPU(g->ring);
		hsaKmtFreeMemory(g->ring, RING_DWORDS * 4);
		g->ring = NULL;
	}
}

/* Dwords the CP has not consumed yet (gfx9+: 64-bit pointers, in dwords). */
static uint64_t real_busy_dwords(struct gpu *g)
{
	uint64_t rptr = __atomic_load_n(g->queue.Queue_read_ptr_aql, __ATOMIC_ACQUIRE);

	return g->wptr - rptr;
}

static int real_submit(struct gpu *g, const struct pm4_buf *b, uint64_t *end_pos)
{
	uint32_t idx = (uint32_t)(g->wptr % RING_DWORDS);
	uint32_t pad = RING_DWORDS - idx < b->len ? RING_DWORDS - idx : 0;
	struct timespec tick = { 0, 100000 };

	if (b->len + pad > RING_DWORDS)
		return -E2BIG;
	for (int i = 0; real_busy_dwords(g) + pad + b->len > RING_DWORDS; i++) {
		if (i == 10000) {	/* one second */
			err("--gpu real: the queue's ring stays full");
			return -EBUSY;
		}
		nanosleep(&tick, NULL);
	}
	/* A packet may not wrap: pad to the end of the ring with NOPs. */
	if (pad == 1) {
		g->ring[idx] = pm4_hdr(PM4_OP_NOP, 0x3fff + 1);	/* one-dword NOP */
	} else if (pad) {
		g->ring[idx] = pm4_hdr(PM4_OP_NOP, pad - 1);
		memset(&g->ring[idx + 1], 0, (pad - 1) * 4);
	}
	g->wptr += pad;
	idx = (uint32_t)(g->wptr % RING_DWORDS);
	memcpy(&g->ring[idx], b->dw, b->len * 4);
	g->wptr += b->len;
	/* Packets visible before the write pointer, then ring the doorbell. */
	__atomic_store_n(g->queue.Queue_write_ptr_aql, g->wptr, __ATOMIC_RELEASE);
	__atomic_store_n(g->queue.Queue_DoorBell_aql, g->wptr, __ATOMIC_RELEASE);
	*end_pos = g->wptr;
	return 0;
}

static int real_map_memory(struct gpu *g, void *cpu, size_t size, uint64_t *va)
{
	if (g->num_mapped == sizeof(g->mapped) / sizeof(g->mapped[0]))
		return -ENOSPC;
	/* Ordinary memory as a userptr BO: the GPU address is the CPU address. */
	if (hsaKmtRegisterMemory(cpu, size) != HSAKMT_STATUS_SUCCESS) {
		err("--gpu real: hsaKmtRegisterMemory failed");
		return -EIO;
	}
	if (hsaKmtMapMemoryToGPU(cpu, size, va) != HSAKMT_STATUS_SUCCESS) {
		hsaKmtDeregisterMemory(cpu);
		err("--gpu real: hsaKmtMapMemoryToGPU failed");
		return -EIO;
	}
	g->mapped[g->num_mapped++] = cpu;
	return 0;
}

static int real_map_buffer(struct gpu *g, int dmabuf_fd, uint64_t *va)
{
	HsaGraphicsResourceInfo info;
	uint32_t node = g->node;

	/* The display's buffer, imported into KFD through its dma-buf. */
	if (dmabuf_fd < 0) {
		err("--gpu real needs the display driver to export buffers (PRIME)");
		return -EOPNOTSUPP;
	}
	if (g->num_mapped == sizeof(g->mapped) / sizeof(g->mapped[0]))
		return -ENOSPC;
	if (hsaKmtRegisterGraphicsHandleToNodes((uint64_t)dmabuf_fd, &info, 1, &node) !=
	    HSAKMT_STATUS_SUCCESS) {
		err("--gpu real: cannot import the scanout buffer into KFD");
		return -EIO;
	}
	if (hsaKmtMapMemoryToGPU(info.MemoryAddress, info.SizeInBytes, va) !=
	    HSAKMT_STATUS_SUCCESS) {
		hsaKmtDeregisterMemory(info.MemoryAddress);
		err("--gpu real: cannot map the scanout buffer to the GPU");
		return -EIO;
	}
	/* Unmapped and deregistered in gpu_close(). */
	g->mapped[g->num_mapped++] = info.MemoryAddress;
	return 0;
}

#else /* !KFDSYNC_HAVE_HSAKMT */

/* Built without libhsakmt: kfd_open(GPU_REAL) refused already. */
static int real_open(struct gpu *g)
{
	(void)g;
	err("--gpu real needs libhsakmt, which this build was made without");
	return -EOPNOTSUPP;
}

static void real_close(struct gpu *g)
{
	(void)g;
}

static int real_submit(struct gpu *g, const struct pm4_buf *b, uint64_t *end_pos)
{
	(void)g;
	(void)b;
	(void)end_pos;
	return -EOPNOTSUPP;
}

static int real_map_memory(struct gpu *g, void *cpu, size_t size, uint64_t *va)
{
	(void)g;
	(void)cpu;
	(void)size;
	(void)va;
	return -EOPNOTSUPP;
}

static int real_map_buffer(struct gpu *g, int dmabuf_fd, uint64_t *va)
{
	(void)g;
	(void)dmabuf_fd;
	(void)va;
	return -EOPNOTSUPP;
}
#endif /* KFDSYNC_HAVE_HSAKMT */

/* ---- the interface ---- */

int gpu_open(struct gpu **gpu, enum gpu_kind kind)
{
	struct gpu *g = calloc(1, sizeof(*g));
	int ret;

	if (!g)
		return -ENOMEM;
	g->kind = kind;
	g->sim_fd = -1;
	ret = kind == GPU_SIM ? sim_open(g) : real_open(g);
	if (ret) {
		gpu_close(g);
		return ret;
	}
	*gpu = g;
	return 0;
}

void gpu_close(struct gpu *g)
{
	if (!g)
		return;
	if (g->kind == GPU_SIM)
		sim_close(g);
	else
		real_close(g);
	free(g);
}

const char *gpu_name(const struct gpu *g)
{
	return g->kind == GPU_SIM ? "simulated GPU (kfdsim)" :
				    "AMD GPU, KFD compute queue (not tested on hardware)";
}

int gpu_map_memory(struct gpu *g, void *cpu, size_t size, uint64_t *va)
{
	if (g->kind == GPU_SIM) {
		/* The simulator works in our address space. */
		*va = (uintptr_t)cpu;
		return 0;
	}
	return real_map_memory(g, cpu, size, va);
}

int gpu_map_buffer(struct gpu *g, void *map, int dmabuf_fd, uint64_t *va)
{
	if (g->kind == GPU_SIM) {
		/* kfdsim writes through our CPU mapping of the buffer. */
		*va = (uintptr_t)map;
		return 0;
	}
	return real_map_buffer(g, dmabuf_fd, va);
}
int gpu_submit(struct gpu *g, const struct pm4_buf *b, uint64_t *end_pos)
{
	int ret;

	if (b->overflow || !b->len)
		return -ENOSPC;
	if (g->kind == GPU_SIM) {
		ret = kfdsim_submit_buf(g->sim_fd, g->sim_queue, b, end_pos);
		if (ret)
			err("cannot submit to the simulated queue: %s", strerror(-ret));
		return ret;
	}
	return real_submit(g, b, end_pos);
}

int gpu_wait_pos(struct gpu *g, uint64_t pos, int timeout_ms)
{
	if (g->kind != GPU_SIM)
		return -EOPNOTSUPP;
	return kfdsim_queue_wait(g->sim_fd, g->sim_queue, pos, timeout_ms);
}

/* ---- a frame's job ---- */

int stage_event_new(struct kfdsync_ctx *ctx, struct stage_event *ev)
{
	ev->signals = 0;
	return kfd_signal_event_new(ctx, &ev->event);
}

void stage_event_free(struct kfdsync_ctx *ctx, struct stage_event *ev)
{
	if (!ev->event.live)
		return;
	kfdsync_event_remove(ctx, ev->event.id);
	kfd_signal_event_destroy(&ev->event);
}

int stage_submit(struct gpu *gpu, struct kfdsync_ctx *ctx, struct stage_event *ev,
		 struct stage_job *job)
{
	/* One frame's stream, off the stack (the examples submit from one thread). */
	static uint32_t dw[65536];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct kfdsync_event_state st;
	size_t draw_len = 0;
	uint64_t end;
	int ret, fence;

	/*
	 * The event's age before submission. Every earlier job on it has
	 * signalled (checked), so "the next signal after this age" is this
	 * job's; exporting after the submission is then fine too.
	 */
	ret = kfdsync_event_get_state(ctx, ev->event.id, &st);
	if (ret || st.age != ev->signals) {
		err("frame %u: event %u has age %" PRIu64 ", expected %" PRIu64 "%s%s", job->n,
		    ev->event.id, ret ? 0 : st.age, ev->signals,
		    ret ? ": " : ": an earlier frame's signal is missing", ret ? strerror(-ret) : "");
		return ret ? ret : -EPROTO;
	}
	if (job->gate_va)
		pm4_wait_reg_mem(&b, job->gate_va, PM4_WAIT_GE, (uint32_t)job->gate_min,
				 0xffffffffu);
	if (job->stamp_va) {
		/* What the gate held as the queue passed it, the frame, and when. */
		if (job->gate_va)
			pm4_dma_copy(&b, job->stamp_va + offsetof(struct stage_stamp, gate_seen),
				     job->gate_va, 8);
		pm4_write_data64(&b, job->stamp_va + offsetof(struct stage_stamp, frame), job->n);
		pm4_release_mem(&b, job->stamp_va + offsetof(struct stage_stamp, start_ns), 0,
				PM4_RELEASE_MEM_DATA_GPU_CLOCK, PM4_RELEASE_MEM_INT_NONE, 0);
	}
	if (job->draw && !job->draw_last) {
		job->draw(&b, job->arg);
		draw_len = b.len;
	}
	/* 60 s per packet at most. */
	for (unsigned int left = job->busy_ms; left > 0; left -= left > 60000 ? 60000 : left)
		pm4_sim_delay(&b, (left > 60000 ? 60000 : left) * 1000);
	if (job->draw && job->draw_last) {
		job->draw(&b, job->arg);
		draw_len = b.len;
	}
	if (job->hang)
		pm4_sim_hang(&b);
	/* Signal the frame's event: write its slot, interrupt. */
	pm4_release_mem_event(&b, ev->event.slot, ev->event.id);
	if (b.overflow) {
		err("frame %u: the command stream does not fit (%zu dwords)", job->n, b.cap);
		return -ENOSPC;
	}
	job->submit_ns = now_ns();
	ret = gpu_submit(gpu, &b, &end);
	if (ret)
		return ret;
	ev->signals++;
	job->draw_end = end - (b.len - (draw_len ? draw_len : b.len));
	fence = kfdsync_event_export_sync_file(ctx, ev->event.id, st.age, job->watchdog_ns);
	if (fence < 0)
		err("frame %u: cannot export its event as a sync_file: %s", job->n,
		    strerror(-fence));
	return fence;
}
