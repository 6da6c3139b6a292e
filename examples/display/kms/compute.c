// SPDX-License-Identifier: MIT
/*
 * compute.c - the two compute back-ends of kfdsync-kms (see compute.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hsakmt.h>

#include "common.h"
#include "compute.h"
#include "display.h"
#include "kfdsim.h"

/* Ring size of either back-end, in dwords: room for a few frames' packets. */
#define RING_DWORDS	16384u

struct gpu {
	enum gpu_kind kind;

	/* sim */
	int sim_fd;
	uint32_t sim_queue;

	/* real (not tested on hardware) */
	uint32_t node;			/* KFD node of the GPU */
	uint32_t *ring;			/* hsaKmtAllocMemory, host-visible */
	HsaQueueResource queue;		/* ids, doorbell, read/write pointers */
	bool queue_created;
	uint64_t wptr;			/* dwords ever written to the ring */
	void *mapped[8];		/* memory and buffers mapped to the GPU */
	unsigned int num_mapped;
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

int gpu_map_buffer(struct gpu *g, struct buffer *b, uint64_t *va)
{
	HsaGraphicsResourceInfo info;
	uint32_t node = g->node;

	if (g->kind == GPU_SIM) {
		/* kfdsim writes through our CPU mapping of the dumb buffer. */
		*va = (uintptr_t)b->map;
		return 0;
	}
	/* The display's buffer, imported into KFD through its dma-buf. */
	if (b->dmabuf_fd < 0) {
		err("--gpu real needs the display driver to export buffers (PRIME)");
		return -EOPNOTSUPP;
	}
	if (g->num_mapped == sizeof(g->mapped) / sizeof(g->mapped[0]))
		return -ENOSPC;
	if (hsaKmtRegisterGraphicsHandleToNodes((uint64_t)b->dmabuf_fd, &info, 1, &node) !=
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
