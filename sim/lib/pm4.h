/* SPDX-License-Identifier: MIT */
/*
 * pm4.h - build PM4 type-3 packets for the GPU simulator (and for what a
 * gfx9 compute queue would run: the layouts are the hardware's).
 *
 * Field layouts follow amdgpu's soc15d.h and amdkfd's kfd_pm4_headers_ai.h
 * (gfx9). Packets are appended to a caller-provided buffer:
 *
 *	uint32_t dw[64];
 *	struct pm4_buf b = PM4_BUF_INIT(dw);
 *
 *	pm4_sim_delay(&b, 1000);
 *	pm4_release_mem_event(&b, ev->EventData.HWData2, ev->EventId);
 *	if (b.overflow) ...
 *	kfdsim_submit_buf(fd, queue, &b, &end);
 *
 * Every builder returns 0, or -ENOSPC when the packet does not fit (the
 * buffer is left unchanged and @overflow is set, so a sequence of builders
 * can be checked once at the end).
 */
#ifndef KFDSYNC_TESTS_SIM_PM4_H
#define KFDSYNC_TESTS_SIM_PM4_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kfdsim_uapi.h"

/* Header: type[31:30] = 3, count[29:16] = body dwords - 1, opcode[15:8]. */
#define PM4_TYPE3			3u
#define PM4_MAX_BODY			0x4000u

#define PM4_OP_NOP			0x10u
#define PM4_OP_WRITE_DATA		0x37u
#define PM4_OP_WAIT_REG_MEM		0x3cu
#define PM4_OP_INDIRECT_BUFFER		0x3fu
#define PM4_OP_RELEASE_MEM		0x49u
#define PM4_OP_DMA_DATA			0x50u

/* RELEASE_MEM dword 1: event_type[5:0], event_index[11:8]. */
#define PM4_EVENT_CACHE_FLUSH_AND_INV_TS	0x14u
#define PM4_EVENT_INDEX_END_OF_PIPE		5u
/* RELEASE_MEM dword 2: dst_sel[17:16], int_sel[26:24], data_sel[31:29]. */
#define PM4_RELEASE_MEM_DATA_NONE	0u
#define PM4_RELEASE_MEM_DATA_32		1u
#define PM4_RELEASE_MEM_DATA_64		2u
#define PM4_RELEASE_MEM_DATA_GPU_CLOCK	3u	/* the simulator writes CLOCK_MONOTONIC ns */
#define PM4_RELEASE_MEM_INT_NONE	0u
#define PM4_RELEASE_MEM_INT_ONLY	1u
#define PM4_RELEASE_MEM_INT_AFTER_WRITE	2u

/* WAIT_REG_MEM dword 1: function[2:0], mem_space[5:4], operation[7:6]. */
#define PM4_WAIT_ALWAYS			0u
#define PM4_WAIT_LT			1u
#define PM4_WAIT_LE			2u
#define PM4_WAIT_EQ			3u
#define PM4_WAIT_NE			4u
#define PM4_WAIT_GE			5u
#define PM4_WAIT_GT			6u
#define PM4_WAIT_MEM_SPACE_REG		0u
#define PM4_WAIT_MEM_SPACE_MEM		1u
#define PM4_WAIT_POLL_INTERVAL_DEFAULT	4u

/* WRITE_DATA dword 1: dst_sel[11:8] (5 = memory), one_addr bit 16, wr_confirm bit 20. */
#define PM4_WRITE_DATA_DST_MEM		5u
#define PM4_WRITE_DATA_ONE_ADDR		(1u << 16)
#define PM4_WRITE_DATA_WR_CONFIRM	(1u << 20)

/* DMA_DATA dword 1: dst_sel[21:20], src_sel[30:29] (2 = data), cp_sync bit 31. */
#define PM4_DMA_SRC_SEL_ADDR		0u
#define PM4_DMA_SRC_SEL_DATA		2u
#define PM4_DMA_CP_SYNC			(1u << 31)
/* DMA_DATA dword 6: byte_count[20:0]. */
#define PM4_DMA_MAX_BYTES		0x1ffffcu	/* largest multiple of 4 */

struct pm4_buf {
	uint32_t *dw;		/* storage */
	size_t len;		/* dwords written */
	size_t cap;		/* dwords available */
	bool overflow;		/* a builder did not fit */
};

#define PM4_BUF_INIT(array) \
	{ .dw = (array), .len = 0, .cap = sizeof(array) / sizeof((array)[0]), .overflow = false }

static inline uint32_t pm4_hdr(uint32_t opcode, uint32_t body_dwords)
{
	return PM4_TYPE3 << 30 | ((body_dwords - 1) & 0x3fffu) << 16 | (opcode & 0xffu) << 8;
}

static inline void pm4_reset(struct pm4_buf *b)
{
	b->len = 0;
	b->overflow = false;
}

/* Append @n raw dwords (any packet, also deliberately malformed ones). */
static inline int pm4_raw(struct pm4_buf *b, const uint32_t *dw, size_t n)
{
	size_t i;

	if (b->cap - b->len < n) {
		b->overflow = true;
		return -ENOSPC;
	}
	for (i = 0; i < n; i++)
		b->dw[b->len + i] = dw[i];
	b->len += n;
	return 0;
}

/* NOP with @body_dwords (1 to 0x3ffe) zero dwords of body. */
static inline int pm4_nop(struct pm4_buf *b, uint32_t body_dwords)
{
	size_t i;

	if (!body_dwords || body_dwords > 0x3ffe || b->cap - b->len < body_dwords + 1) {
		b->overflow = true;
		return -ENOSPC;
	}
	b->dw[b->len++] = pm4_hdr(PM4_OP_NOP, body_dwords);
	for (i = 0; i < body_dwords; i++)
		b->dw[b->len++] = 0;
	return 0;
}

/* The single-dword NOP amdgpu pads gfx9 rings with. */
static inline int pm4_nop1(struct pm4_buf *b)
{
	uint32_t h = pm4_hdr(PM4_OP_NOP, 0x3fff + 1);

	return pm4_raw(b, &h, 1);
}

/*
 * RELEASE_MEM (8 dwords): at end of pipe, write @data (DATA_32: low half;
 * DATA_64; GPU_CLOCK: a timestamp) to @addr, then raise an interrupt with
 * @int_ctxid if @int_sel asks for one.
 */
static inline int pm4_release_mem(struct pm4_buf *b, uint64_t addr, uint64_t data,
				  uint32_t data_sel, uint32_t int_sel, uint32_t int_ctxid)
{
	const uint32_t p[8] = {
		pm4_hdr(PM4_OP_RELEASE_MEM, 7),
		PM4_EVENT_CACHE_FLUSH_AND_INV_TS | PM4_EVENT_INDEX_END_OF_PIPE << 8,
		(int_sel & 7u) << 24 | (data_sel & 7u) << 29,	/* dst_sel 0: memory */
		(uint32_t)addr,
		(uint32_t)(addr >> 32),
		(uint32_t)data,
		(uint32_t)(data >> 32),
		int_ctxid,
	};

	return pm4_raw(b, p, 8);
}

/*
 * Signal a KFD signal event the way kfdtest does: write the event id to its
 * slot (HsaEvent.EventData.HWData2) and interrupt with the id as context.
 */
static inline int pm4_release_mem_event(struct pm4_buf *b, uint64_t slot, uint32_t event_id)
{
	return pm4_release_mem(b, slot, event_id, PM4_RELEASE_MEM_DATA_64,
			       PM4_RELEASE_MEM_INT_AFTER_WRITE, event_id);
}

/* WAIT_REG_MEM on memory (7 dwords): until (*addr & mask) <function> ref. */
static inline int pm4_wait_reg_mem(struct pm4_buf *b, uint64_t addr, uint32_t function,
				   uint32_t ref, uint32_t mask)
{
	const uint32_t p[7] = {
		pm4_hdr(PM4_OP_WAIT_REG_MEM, 6),
		(function & 7u) | PM4_WAIT_MEM_SPACE_MEM << 4,	/* operation 0: wait */
		(uint32_t)addr & ~3u,
		(uint32_t)(addr >> 32),
		ref,
		mask,
		PM4_WAIT_POLL_INTERVAL_DEFAULT,
	};

	return pm4_raw(b, p, 7);
}

/* WRITE_DATA to memory: @n (1 to 0x3ffd) dwords at @addr. */
static inline int pm4_write_data(struct pm4_buf *b, uint64_t addr, const uint32_t *data,
				 uint32_t n)
{
	size_t i;

	if (!n || n > 0x3ffd || b->cap - b->len < (size_t)n + 4) {
		b->overflow = true;
		return -ENOSPC;
	}
	b->dw[b->len++] = pm4_hdr(PM4_OP_WRITE_DATA, n + 3);
	b->dw[b->len++] = PM4_WRITE_DATA_DST_MEM << 8 | PM4_WRITE_DATA_WR_CONFIRM;
	b->dw[b->len++] = (uint32_t)addr;
	b->dw[b->len++] = (uint32_t)(addr >> 32);
	for (i = 0; i < n; i++)
		b->dw[b->len++] = data[i];
	return 0;
}

static inline int pm4_write_data32(struct pm4_buf *b, uint64_t addr, uint32_t value)
{
	return pm4_write_data(b, addr, &value, 1);
}

static inline int pm4_write_data64(struct pm4_buf *b, uint64_t addr, uint64_t value)
{
	const uint32_t v[2] = { (uint32_t)value, (uint32_t)(value >> 32) };

	return pm4_write_data(b, addr, v, 2);
}

/* One DMA_DATA packet (7 dwords); @bytes at most PM4_DMA_MAX_BYTES. */
static inline int pm4_dma_data(struct pm4_buf *b, uint32_t src_sel, uint64_t src_or_data,
			       uint64_t dst, uint32_t bytes)
{
	const uint32_t p[7] = {
		pm4_hdr(PM4_OP_DMA_DATA, 6),
		PM4_DMA_CP_SYNC | (src_sel & 3u) << 29,		/* dst_sel 0: memory */
		(uint32_t)src_or_data,
		(uint32_t)(src_or_data >> 32),
		(uint32_t)dst,
		(uint32_t)(dst >> 32),
		bytes & 0x1fffffu,
	};

	return pm4_raw(b, p, 7);
}

/*
 * Fill @bytes (a multiple of 4) at @dst (4-byte aligned) with @value, as
 * many DMA_DATA packets as needed: how a test "renders" into a buffer.
 */
static inline int pm4_dma_fill(struct pm4_buf *b, uint64_t dst, uint32_t value, uint64_t bytes)
{
	size_t start = b->len;

	while (bytes) {
		uint32_t n = bytes > PM4_DMA_MAX_BYTES ? PM4_DMA_MAX_BYTES : (uint32_t)bytes;

		if (pm4_dma_data(b, PM4_DMA_SRC_SEL_DATA, value, dst, n)) {
			b->len = start;
			return -ENOSPC;
		}
		dst += n;
		bytes -= n;
	}
	return 0;
}

/* Copy @bytes from @src to @dst (non-overlapping), as DMA_DATA packets. */
static inline int pm4_dma_copy(struct pm4_buf *b, uint64_t dst, uint64_t src, uint64_t bytes)
{
	size_t start = b->len;

	while (bytes) {
		uint32_t n = bytes > PM4_DMA_MAX_BYTES ? PM4_DMA_MAX_BYTES : (uint32_t)bytes;

		if (pm4_dma_data(b, PM4_DMA_SRC_SEL_ADDR, src, dst, n)) {
			b->len = start;
			return -ENOSPC;
		}
		src += n;
		dst += n;
		bytes -= n;
	}
	return 0;
}

/* Simulator-only packets: NOPs carrying KFDSIM_NOP_MAGIC (see kfdsim_uapi.h). */

/* "Work that takes @us microseconds" (at most KFDSIM_DELAY_MAX_US). */
static inline int pm4_sim_delay(struct pm4_buf *b, uint32_t us)
{
	const uint32_t p[4] = {
		pm4_hdr(PM4_OP_NOP, 3), KFDSIM_NOP_MAGIC, KFDSIM_CMD_DELAY, us,
	};

	return pm4_raw(b, p, 4);
}

/* The queue hangs here: it stops executing and never signals. */
static inline int pm4_sim_hang(struct pm4_buf *b)
{
	const uint32_t p[3] = { pm4_hdr(PM4_OP_NOP, 2), KFDSIM_NOP_MAGIC, KFDSIM_CMD_HANG };

	return pm4_raw(b, p, 3);
}

/* Raise a HW exception for the owner here; the queue stops with -EIO. */
static inline int pm4_sim_hw_exception(struct pm4_buf *b)
{
	const uint32_t p[3] = {
		pm4_hdr(PM4_OP_NOP, 2), KFDSIM_NOP_MAGIC, KFDSIM_CMD_HW_EXCEPTION,
	};

	return pm4_raw(b, p, 3);
}

#endif /* KFDSYNC_TESTS_SIM_PM4_H */
