// SPDX-License-Identifier: MIT
/*
 * sim_queue - the GPU simulator's queues: packets, errors, hangs, lifetime.
 *
 * - every supported packet does what the PM4 layout says (WRITE_DATA,
 *   DMA_DATA fill and copy, NOPs, RELEASE_MEM timestamps, WAIT_REG_MEM
 *   compare functions), also across submits and ring wrap-around;
 * - malformed packets, unsupported opcodes and bad addresses stop the queue
 *   with the documented errno at the failing packet's position, run nothing
 *   after it, and never splat (the guest runner fails the run on any WARN);
 * - hangs stop execution without signalling;
 * - destroy, close and the owner's death stop a queue in the middle of a
 *   WAIT_REG_MEM or a delay and free it (KFDSIM_IOC_INFO live_queues).
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "sim_test.h"

#define PLAN		67
#define KERNEL_ADDR	0xffff888000000000ull

static int sim = -1;

/*
 * Fork a child that owns a queue busy in a WAIT_REG_MEM that never ends
 * (@in_wait) or in a long delay, then is SIGKILLed while it waits on an
 * event (@killed) or exits.
 */
static void test_owner_death(const char *name, bool in_wait, bool killed)
{
	uint32_t before = live_queues(sim), during = 0;
	int pipefd[2], status = 0;
	char c = 0;
	pid_t pid;

	if (pipe(pipefd))
		tap_bail("pipe");
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		volatile uint32_t never = 0;
		uint32_t dw[32], q;
		struct pm4_buf b = PM4_BUF_INIT(dw);
		HsaEvent *ev;
		int fd;

		close(pipefd[0]);
		if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
			_exit(2);
		ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
		fd = kfdsim_open();
		if (!ev || fd < 0 || kfdsim_queue_create(fd, 0, &q, NULL))
			_exit(3);
		if (in_wait)
			pm4_wait_reg_mem(&b, (uintptr_t)&never, PM4_WAIT_EQ, 1, 0xffffffff);
		else
			pm4_sim_delay(&b, KFDSIM_DELAY_MAX_US);
		pm4_release_mem_event(&b, slot_addr(ev), ev->EventId);
		if (kfdsim_submit_buf(fd, q, &b, NULL) ||
		    !wait_until_executing(fd, q, in_wait ? PM4_OP_WAIT_REG_MEM : PM4_OP_NOP,
					  WAIT_MS))
			_exit(4);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(5);
		if (!killed)
			_exit(0);	/* exit with the queue busy, nothing destroyed */
		hsaKmtWaitOnEvent(ev, HSA_EVENTTIMEOUT_INFINITE);
		_exit(6);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) == 1) {
		during = live_queues(sim);
		if (killed)
			kill(pid, SIGKILL);
	}
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	tap_ok(c == 'r' && during == before + 1 &&
	       (killed ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL :
			 WIFEXITED(status) && !WEXITSTATUS(status)) &&
	       live_queues(sim) == before,
	       "%s (queues %u/%u/%u, child status %#x)", name, before, during, live_queues(sim),
	       status);
}

/*
 * The owner exits while a process it forked still holds the file: the queue
 * outlives the owner's address space (its WAIT_REG_MEM then fails with
 * -ESRCH) and is freed when the last holder closes the file.
 */
static void test_owner_exit_file_held_elsewhere(void)
{
	uint32_t before = live_queues(sim), during = 0;
	int ready[2], release[2], status, reaped = 0;
	char c = 0;
	pid_t pid;

	if (pipe(ready) || pipe(release))
		tap_bail("pipe");
	prctl(PR_SET_CHILD_SUBREAPER, 1);	/* reap the grandchild too */
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		volatile uint32_t never = 0;
		uint32_t dw[16], q;
		struct pm4_buf b = PM4_BUF_INIT(dw);
		int fd;

		close(ready[0]);
		close(release[1]);
		if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
			_exit(2);
		fd = kfdsim_open();
		if (fd < 0 || kfdsim_queue_create(fd, 0, &q, NULL))
			_exit(3);
		pm4_wait_reg_mem(&b, (uintptr_t)&never, PM4_WAIT_EQ, 1, 0xffffffff);
		if (kfdsim_submit_buf(fd, q, &b, NULL) ||
		    !wait_until_executing(fd, q, PM4_OP_WAIT_REG_MEM, WAIT_MS))
			_exit(4);
		if (!fork()) {
			/* Holds the file (inherited) until told to go. */
			if (read(release[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		_exit(write(ready[1], "r", 1) == 1 ? 0 : 5);
	}
	close(ready[1]);
	close(release[0]);
	if (read(ready[0], &c, 1) == 1 && waitpid(pid, &status, 0) == pid &&
	    WIFEXITED(status) && !WEXITSTATUS(status)) {
		reaped++;
		during = live_queues(sim);
	}
	close(ready[0]);
	close(release[1]);	/* the grandchild exits */
	while (waitpid(-1, &status, 0) > 0)
		reaped++;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	tap_ok(c == 'r' && reaped == 2 && during == before + 1 && live_queues(sim) == before,
	       "owner_exit_file_held_elsewhere_freed_at_last_close (queues %u/%u/%u)", before,
	       during, live_queues(sim));
}

static void test_not_owner(void)
{
	struct kfdsim_queue_status st;
	uint32_t q;
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		tap_bail("fork");
	if (!pid)
		_exit(kfdsim_queue_create(sim, 0, &q, NULL) == -EBADF &&
		      kfdsim_queue_status(sim, 1, &st) == -EBADF ? 0 : 1);
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status), "ioctl_from_other_process_ebadf");
}

static int raw_ioctl(unsigned long req, void *arg)
{
	return ioctl(sim, req, arg) < 0 ? -errno : 0;
}

static void test_ioctl_validation(uint32_t q)
{
	struct kfdsim_info info = { .pad = 1 };
	struct kfdsim_queue_create create = { .flags = 1 };
	struct kfdsim_submit sub = { .queue_id = q, .count_dwords = 1 };
	struct kfdsim_queue_wait wait = { .queue_id = q };
	struct kfdsim_inject inj = { .queue_id = q };
	uint32_t nop = pm4_hdr(PM4_OP_NOP, 0x3fff + 1), id;
	static const uint32_t bad_rings[] = { 512, 1000, 3000, 131072 };
	unsigned int i, ok = 0;

	tap_ok(raw_ioctl(KFDSIM_IOC_INFO, &info) == -EINVAL, "ioctl_info_pad_einval");
	tap_ok(raw_ioctl(KFDSIM_IOC_QUEUE_CREATE, &create) == -EINVAL,
	       "ioctl_create_flags_einval");
	for (i = 0; i < sizeof(bad_rings) / sizeof(bad_rings[0]); i++)
		ok += kfdsim_queue_create(sim, bad_rings[i], &id, NULL) == -EINVAL;
	tap_ok(ok == 4, "ioctl_create_bad_ring_size_einval");
	tap_ok(kfdsim_queue_destroy(sim, 9999) == -ENOENT, "ioctl_destroy_unknown_enoent");
	tap_ok(kfdsim_submit(sim, q, &nop, 0, 0, NULL) == -EINVAL &&
	       kfdsim_submit(sim, q, &nop, 4097, 0, NULL) == -EINVAL,
	       "ioctl_submit_bad_count_einval");
	sub.flags = 0x80;
	sub.dwords = (uintptr_t)&nop;
	tap_ok(raw_ioctl(KFDSIM_IOC_SUBMIT, &sub) == -EINVAL, "ioctl_submit_flags_einval");
	sub.flags = 0;
	sub.dwords = 8;
	tap_ok(raw_ioctl(KFDSIM_IOC_SUBMIT, &sub) == -EFAULT, "ioctl_submit_bad_pointer_efault");
	wait.pos = queue_status(sim, q).submitted + 1;
	tap_ok(raw_ioctl(KFDSIM_IOC_QUEUE_WAIT, &wait) == -EINVAL,
	       "ioctl_wait_past_submitted_einval");
	inj.flags = 0;
	ok = raw_ioctl(KFDSIM_IOC_INJECT, &inj) == -EINVAL;
	inj.flags = KFDSIM_INJECT_HANG | KFDSIM_INJECT_HW_EXCEPTION;
	tap_ok(ok && raw_ioctl(KFDSIM_IOC_INJECT, &inj) == -EINVAL, "ioctl_inject_flags_einval");
	tap_ok(raw_ioctl(_IO(KFDSIM_IOC_BASE, 0x20), NULL) == -ENOTTY &&
	       raw_ioctl(_IOW(KFDSIM_IOC_BASE, 0x01, uint32_t), &id) == -ENOTTY,
	       "ioctl_unknown_enotty");
	tap_ok(kfdsim_queue_status(sim, 9999, &(struct kfdsim_queue_status){ 0 }) == -ENOENT,
	       "ioctl_status_unknown_enoent");
}

static bool run(uint32_t q, struct pm4_buf *b)
{
	uint64_t end = submit(sim, q, b);
	int ret = kfdsim_queue_wait(sim, q, end, WAIT_MS);

	if (ret) {
		struct kfdsim_queue_status st = queue_status(sim, q);

		tap_diag("queue wait: %s", strerror(-ret));
		diag_status("queue", &st);
	}
	pm4_reset(b);
	return !ret;
}

static bool all_equal(const uint32_t *p, size_t n, uint32_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void test_packets(uint32_t q)
{
	static const uint32_t data[4] = { 0x11111111, 0x22222222, 0x33333333, 0x44444444 };
	volatile uint32_t out[8] = { 0 };
	volatile uint64_t out64[2] = { 0 };
	size_t big = 3u << 20;	/* a 1024x768 XRGB8888 frame: two DMA_DATA packets */
	uint32_t *fb = malloc(big), *copy = malloc(1u << 20);
	uint32_t dw[256], one_addr[7], r;
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct kfdsim_queue_status st;
	uint64_t before, t0;
	unsigned int i, ok;
	static const struct {
		uint32_t function, value, ref, mask;
	} cmp[] = {
		{ PM4_WAIT_ALWAYS, 0, 1, ~0u },
		{ PM4_WAIT_LT, 1, 2, ~0u },
		{ PM4_WAIT_LE, 2, 2, ~0u },
		{ PM4_WAIT_EQ, 0x1234ff, 0xff, 0xff },
		{ PM4_WAIT_NE, 5, 6, ~0u },
		{ PM4_WAIT_GE, 7, 7, ~0u },
		{ PM4_WAIT_GT, 8, 7, ~0u },
		{ PM4_WAIT_EQ, 0xabcd0001, 1, 0xffff },
	};

	if (!fb || !copy)
		tap_bail("malloc");

	pm4_write_data(&b, (uintptr_t)out, data, 4);
	tap_ok(run(q, &b) && out[0] == data[0] && out[3] == data[3] && !out[4],
	       "write_data_four_dwords");

	/* WR_ONE_ADDR: every dword to the same address, the last one stays. */
	one_addr[0] = pm4_hdr(PM4_OP_WRITE_DATA, 6);
	one_addr[1] = PM4_WRITE_DATA_DST_MEM << 8 | PM4_WRITE_DATA_ONE_ADDR;
	one_addr[2] = (uint32_t)(uintptr_t)&out[5];
	one_addr[3] = (uint32_t)((uintptr_t)&out[5] >> 32);
	one_addr[4] = 1;
	one_addr[5] = 2;
	one_addr[6] = 3;
	pm4_raw(&b, one_addr, 7);
	tap_ok(run(q, &b) && out[5] == 3 && !out[6], "write_data_one_addr");

	pm4_write_data64(&b, (uintptr_t)&out64[0], 0x0123456789abcdefull);
	tap_ok(run(q, &b) && out64[0] == 0x0123456789abcdefull, "write_data_64bit");

	memset(fb, 0, big);
	pm4_dma_fill(&b, (uintptr_t)fb, 0xff336699, big);
	tap_ok(b.len == 14 && run(q, &b) && all_equal(fb, big / 4, 0xff336699),
	       "dma_data_fill_frame");
	memset(copy, 0, 1u << 20);
	pm4_dma_fill(&b, (uintptr_t)fb, 0x01020304, 4096);
	pm4_dma_copy(&b, (uintptr_t)copy, (uintptr_t)fb, 1u << 20);
	tap_ok(run(q, &b) && all_equal(copy, 1024, 0x01020304) &&
	       all_equal(copy + 1024, (1u << 18) - 1024, 0xff336699), "dma_data_copy");

	/* NOPs: plain, one-dword (gfx9 ring padding), with a foreign body. */
	before = queue_status(sim, q).packets;
	pm4_nop(&b, 1);
	pm4_nop1(&b);
	pm4_nop1(&b);
	pm4_nop(&b, 3);
	b.dw[b.len - 3] = 0xdeadbeef;	/* not the simulator's magic */
	pm4_nop(&b, 200);
	tap_ok(run(q, &b) && queue_status(sim, q).packets == before + 5, "nop_variants");

	/* A packet split across submits runs once it is whole. */
	before = queue_status(sim, q).completed;
	pm4_write_data32(&b, (uintptr_t)&out[7], 0x77);
	r = kfdsim_submit(sim, q, b.dw, 2, 0, NULL);
	st = queue_status(sim, q);
	ok = !r && st.completed == before && st.state == KFDSIM_QUEUE_RUNNING && !out[7];
	r = kfdsim_submit(sim, q, b.dw + 2, (uint32_t)b.len - 2, 0, &t0);
	tap_ok(ok && !r && !kfdsim_queue_wait(sim, q, t0, WAIT_MS) && out[7] == 0x77,
	       "packet_split_across_submits");
	pm4_reset(&b);

	/* RELEASE_MEM timestamp: CLOCK_MONOTONIC between submit and wait. */
	t0 = (uint64_t)kfdsim_now_ns();
	pm4_release_mem(&b, (uintptr_t)&out64[1], 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
			PM4_RELEASE_MEM_INT_NONE, 0);
	tap_ok(run(q, &b) && out64[1] >= t0 && out64[1] <= (uint64_t)kfdsim_now_ns(),
	       "release_mem_timestamp");

	/* WAIT_REG_MEM compare functions, each already true. */
	for (i = 0, ok = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++) {
		out[0] = cmp[i].value;
		pm4_wait_reg_mem(&b, (uintptr_t)&out[0], cmp[i].function, cmp[i].ref,
				 cmp[i].mask);
		ok += run(q, &b);
	}
	tap_ok(ok == sizeof(cmp) / sizeof(cmp[0]), "wait_reg_mem_functions (%u)", ok);

	free(fb);
	free(copy);
}

/* More dwords than the ring holds: blocking submits wait for space. */
static void test_ring_wrap(void)
{
	volatile uint32_t counter = 0;
	uint32_t q, dw[16], i;
	struct pm4_buf b = PM4_BUF_INIT(dw);
	uint64_t end = 0;
	int ret = kfdsim_queue_create(sim, 1024, &q, NULL);

	if (ret)
		tap_bail("kfdsim_queue_create: %s", strerror(-ret));
	for (i = 1; i <= 700 && !ret; i++) {
		pm4_reset(&b);
		pm4_write_data32(&b, (uintptr_t)&counter, i);
		ret = kfdsim_submit_buf(sim, q, &b, &end);
	}
	tap_ok(!ret && !kfdsim_queue_wait(sim, q, end, WAIT_MS) && counter == 700 &&
	       end == 700 * 5 && queue_status(sim, q).packets == 700,
	       "ring_wraps_in_order (end %" PRIu64 ")", end);
	kfdsim_queue_destroy(sim, q);
}

struct bad_packet {
	const char *name;
	uint32_t dw[8];
	uint32_t len;
	int error;
};

static void test_bad_packets(void *ro_page)
{
	uint64_t ro = (uintptr_t)ro_page;
	const uint32_t H_RM = pm4_hdr(PM4_OP_RELEASE_MEM, 7);
	const uint32_t H_WRM = pm4_hdr(PM4_OP_WAIT_REG_MEM, 6);
	const uint32_t H_DMA = pm4_hdr(PM4_OP_DMA_DATA, 6);
	const uint32_t H_WD = pm4_hdr(PM4_OP_WRITE_DATA, 3);
	const uint32_t RM_64 = PM4_RELEASE_MEM_DATA_64 << 29;
	const uint32_t WD_MEM = PM4_WRITE_DATA_DST_MEM << 8;
	const uint32_t DMA_FILL = PM4_DMA_SRC_SEL_DATA << 29;
	static uint64_t aligned;
	const uint32_t lo = (uint32_t)(uintptr_t)&aligned, hi = (uint32_t)((uintptr_t)&aligned >> 32);
	const uint32_t klo = (uint32_t)KERNEL_ADDR, khi = (uint32_t)(KERNEL_ADDR >> 32);
	const struct bad_packet bad[] = {
		{ "type0_packet", { 0x00001234 }, 1, -EINVAL },
		{ "type2_packet", { 0x80000000 }, 1, -EINVAL },
		{ "unknown_opcode_indirect_buffer",
		  { pm4_hdr(PM4_OP_INDIRECT_BUFFER, 3), lo, hi, 4 }, 4, -EOPNOTSUPP },
		{ "unknown_opcode_0xff", { pm4_hdr(0xff, 1), 0 }, 2, -EOPNOTSUPP },
		{ "predicated_packet", { pm4_hdr(PM4_OP_NOP, 1) | 1, 0 }, 2, -EOPNOTSUPP },
		{ "release_mem_short", { pm4_hdr(PM4_OP_RELEASE_MEM, 5), 0, RM_64, lo, hi, 1 }, 6,
		  -EINVAL },
		{ "release_mem_null_address", { H_RM, 0, RM_64, 8, 0, 1, 0, 0 }, 8, -EFAULT },
		{ "release_mem_kernel_address", { H_RM, 0, RM_64, klo, khi, 1, 0, 0 }, 8, -EFAULT },
		{ "release_mem_readonly_address",
		  { H_RM, 0, RM_64, (uint32_t)ro, (uint32_t)(ro >> 32), 1, 0, 0 }, 8, -EFAULT },
		{ "release_mem_misaligned_64bit", { H_RM, 0, RM_64, lo + 4, hi, 1, 0, 0 }, 8,
		  -EINVAL },
		{ "release_mem_data_sel_invalid", { H_RM, 0, 6u << 29, lo, hi, 1, 0, 0 }, 8,
		  -EINVAL },
		{ "release_mem_int_sel_unsupported", { H_RM, 0, RM_64 | 3u << 24, lo, hi, 1, 0, 0 },
		  8, -EOPNOTSUPP },
		{ "release_mem_dst_sel_register", { H_RM, 0, RM_64 | 2u << 16, lo, hi, 1, 0, 0 }, 8,
		  -EOPNOTSUPP },
		{ "wait_reg_mem_register_space", { H_WRM, PM4_WAIT_EQ, 0x1234, 0, 1, ~0u, 4 }, 7,
		  -EOPNOTSUPP },
		{ "wait_reg_mem_function_invalid", { H_WRM, 7 | 1u << 4, lo, hi, 1, ~0u, 4 }, 7,
		  -EINVAL },
		{ "wait_reg_mem_bad_address", { H_WRM, PM4_WAIT_EQ | 1u << 4, klo, khi, 1, ~0u, 4 },
		  7, -EFAULT },
		{ "write_data_no_data", { H_WD, WD_MEM, lo, hi }, 4, -EINVAL },
		{ "write_data_register", { pm4_hdr(PM4_OP_WRITE_DATA, 4), 0, 0x1234, 0, 1 }, 5,
		  -EOPNOTSUPP },
		{ "write_data_readonly_address",
		  { pm4_hdr(PM4_OP_WRITE_DATA, 4), WD_MEM, (uint32_t)ro, (uint32_t)(ro >> 32), 1 },
		  5, -EFAULT },
		{ "dma_fill_unaligned_count", { H_DMA, DMA_FILL, 1, 0, lo, hi, 6 }, 7, -EINVAL },
		{ "dma_fill_bad_address", { H_DMA, DMA_FILL, 1, 0, 4096, 0, 4096 }, 7, -EFAULT },
		{ "dma_copy_bad_source", { H_DMA, 0, klo, khi, lo, hi, 8 }, 7, -EFAULT },
		{ "sim_unknown_command", { pm4_hdr(PM4_OP_NOP, 2), KFDSIM_NOP_MAGIC, 99 }, 3,
		  -EINVAL },
		{ "sim_delay_too_long",
		  { pm4_hdr(PM4_OP_NOP, 3), KFDSIM_NOP_MAGIC, KFDSIM_CMD_DELAY,
		    KFDSIM_DELAY_MAX_US + 1 }, 4, -EINVAL },
		{ "packet_larger_than_ring", { pm4_hdr(PM4_OP_NOP, 5000) }, 1, -EINVAL },
	};
	volatile uint32_t marker[2];
	uint32_t dw[32], i, q;
	struct pm4_buf b = PM4_BUF_INIT(dw);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kfdsim_queue_status st;
		uint64_t bad_pos, end;
		int wait;

		marker[0] = marker[1] = 0;
		q = queue_create(sim);
		pm4_reset(&b);
		pm4_write_data32(&b, (uintptr_t)&marker[0], 1);
		bad_pos = b.len;
		pm4_raw(&b, bad[i].dw, bad[i].len);
		if (bad[i].len == 1 && bad[i].dw[0] == pm4_hdr(PM4_OP_NOP, 5000))
			;	/* its body could never be submitted: stop here */
		else
			pm4_write_data32(&b, (uintptr_t)&marker[1], 1);
		end = submit(sim, q, &b);
		wait = kfdsim_queue_wait(sim, q, end, WAIT_MS);
		st = queue_status(sim, q);
		if (!tap_ok(wait == -EIO && st.state == KFDSIM_QUEUE_ERROR &&
			    st.error == bad[i].error && st.error_pos == bad_pos &&
			    st.error_header == bad[i].dw[0] && marker[0] == 1 && !marker[1] &&
			    kfdsim_submit_buf(sim, q, &b, NULL) == -EIO,
			    "bad_packet_%s (%s)", bad[i].name, strerror(-bad[i].error))) {
			tap_diag("wait %d, markers %u %u", wait, marker[0], marker[1]);
			diag_status("queue", &st);
		}
		kfdsim_queue_destroy(sim, q);
	}
}

static void test_hang(void)
{
	volatile uint32_t out[2] = { 0 };
	uint32_t dw[1024], q = queue_create(sim);
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct kfdsim_queue_status st;
	uint64_t end, first;
	int ret;

	/* A hang packet: what is before it runs, nothing after it does. */
	pm4_write_data32(&b, (uintptr_t)&out[0], 1);
	first = b.len;
	pm4_sim_hang(&b);
	pm4_write_data32(&b, (uintptr_t)&out[1], 1);
	end = submit(sim, q, &b);
	ret = kfdsim_queue_wait(sim, q, first, WAIT_MS);
	tap_ok(!ret && out[0] == 1, "hang_packet_runs_what_precedes");
	ret = kfdsim_queue_wait(sim, q, end, 50);
	st = queue_status(sim, q);
	tap_ok(ret == -ETIMEDOUT && st.state == KFDSIM_QUEUE_HUNG && st.completed == first &&
	       ((st.exec_header >> 8) & 0xff) == PM4_OP_NOP && !out[1],
	       "hang_packet_stops_queue (wait %d)", ret);
	tap_ok(kfdsim_inject(sim, q, KFDSIM_INJECT_HANG) == 0, "hang_inject_on_hung_queue_ok");
	kfdsim_queue_destroy(sim, q);

	/* Injected into an idle queue; the ring fills up and stays full. */
	q = queue_create(sim);
	ret = kfdsim_inject(sim, q, KFDSIM_INJECT_HANG);
	pm4_reset(&b);
	while (!b.overflow && b.len < 1024 - 8)
		pm4_nop(&b, 7);
	ret |= kfdsim_submit_buf(sim, q, &b, NULL);
	ret |= kfdsim_submit_buf(sim, q, &b, NULL);
	ret |= kfdsim_submit_buf(sim, q, &b, NULL);
	ret |= kfdsim_submit_buf(sim, q, &b, &end);
	st = queue_status(sim, q);
	tap_ok(!ret && st.state == KFDSIM_QUEUE_HUNG && !st.completed && !st.packets,
	       "hang_inject_never_executes");
	tap_ok(kfdsim_submit(sim, q, b.dw, (uint32_t)b.len, KFDSIM_SUBMIT_NONBLOCK, NULL) ==
	       -EAGAIN, "submit_nonblock_full_ring_eagain");
	kfdsim_queue_destroy(sim, q);

	/* A queue stopped with an error cannot be hung any more. */
	q = queue_create(sim);
	pm4_reset(&b);
	pm4_raw(&b, (const uint32_t[]){ 0 }, 1);
	end = submit(sim, q, &b);
	kfdsim_queue_wait(sim, q, end, WAIT_MS);
	tap_ok(kfdsim_inject(sim, q, KFDSIM_INJECT_HANG) == -EIO, "hang_inject_on_error_eio");
	kfdsim_queue_destroy(sim, q);
}

static void test_destroy_busy(void)
{
	volatile uint32_t never = 0;
	uint32_t dw[16], q, before = live_queues(sim);
	struct pm4_buf b = PM4_BUF_INIT(dw);
	int64_t t0;
	int fd2;

	q = queue_create(sim);
	pm4_wait_reg_mem(&b, (uintptr_t)&never, PM4_WAIT_EQ, 1, 0xffffffff);
	submit(sim, q, &b);
	t0 = kfdsim_now_ns();
	tap_ok(wait_until_executing(sim, q, PM4_OP_WAIT_REG_MEM, WAIT_MS) &&
	       !kfdsim_queue_destroy(sim, q) && live_queues(sim) == before,
	       "destroy_mid_wait_reg_mem (%.1f ms)", (kfdsim_now_ns() - t0) / 1e6);

	q = queue_create(sim);
	pm4_reset(&b);
	pm4_sim_delay(&b, KFDSIM_DELAY_MAX_US);
	submit(sim, q, &b);
	tap_ok(wait_until_executing(sim, q, PM4_OP_NOP, WAIT_MS) &&
	       !kfdsim_queue_destroy(sim, q) && live_queues(sim) == before,
	       "destroy_mid_delay");

	/* Closing the file frees its queues, busy or not. */
	fd2 = kfdsim_open();
	if (fd2 < 0)
		tap_bail("kfdsim_open: %s", strerror(-fd2));
	if (kfdsim_queue_create(fd2, 0, &q, NULL))
		tap_bail("kfdsim_queue_create");
	pm4_reset(&b);
	pm4_wait_reg_mem(&b, (uintptr_t)&never, PM4_WAIT_EQ, 1, 0xffffffff);
	kfdsim_submit_buf(fd2, q, &b, NULL);
	if (kfdsim_queue_create(fd2, 0, &q, NULL))
		tap_bail("kfdsim_queue_create");
	pm4_reset(&b);
	pm4_sim_delay(&b, KFDSIM_DELAY_MAX_US);
	kfdsim_submit_buf(fd2, q, &b, NULL);
	tap_ok(wait_until_executing(fd2, q, PM4_OP_NOP, WAIT_MS) &&
	       live_queues(sim) == before + 2, "close_with_busy_queues_setup");
	close(fd2);
	tap_ok(live_queues(sim) == before, "close_with_busy_queues_frees_them");
}

static void test_queue_limit(void)
{
	struct kfdsim_info info;
	uint32_t i, q, created = 0, before = live_queues(sim);
	int fd2 = kfdsim_open(), ret = 0;

	if (fd2 < 0 || kfdsim_info(fd2, &info))
		tap_bail("kfdsim_open");
	for (i = 0; i < info.max_queues && !ret; i++) {
		ret = kfdsim_queue_create(fd2, 1024, &q, NULL);
		created += !ret;
	}
	tap_ok(created == info.max_queues &&
	       kfdsim_queue_create(fd2, 1024, &q, NULL) == -ENOSPC,
	       "queue_limit_enospc (%u of %u)", created, info.max_queues);
	close(fd2);
	tap_ok(live_queues(sim) == before, "queue_limit_close_frees_all");
}

int main(void)
{
	uint32_t q, baseline;
	void *ro_page;

	require_sim_guest();
	require_sim_interrupts();
	scrub_hsa_env();
	tap_plan(PLAN);

	sim = kfdsim_open();
	if (!tap_ok(sim >= 0, "sim_open"))
		tap_bail("%s: %s", KFDSIM_DEVICE, strerror(-sim));
	baseline = live_queues(sim);

	/* Children first: this process has not opened /dev/kfd yet. */
	test_owner_death("owner_killed_mid_wait_reg_mem_frees_queue", true, true);
	test_owner_death("owner_killed_mid_delay_frees_queue", false, true);
	test_owner_death("owner_exit_with_busy_queue_frees_it", true, false);
	test_owner_exit_file_held_elsewhere();
	test_not_owner();

	tap_ok(kfdsim_queue_create(sim, 0, &q, NULL) == -ESRCH, "queue_create_without_kfd_esrch");
	if (!tap_ok(hsaKmtOpenKFD() == HSAKMT_STATUS_SUCCESS, "kfd_open"))
		tap_bail("hsaKmtOpenKFD failed");
	q = queue_create(sim);

	test_ioctl_validation(q);
	test_packets(q);
	test_ring_wrap();
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro_page == MAP_FAILED)
		tap_bail("mmap");
	test_bad_packets(ro_page);
	test_hang();
	test_destroy_busy();
	test_queue_limit();

	tap_ok(!kfdsim_queue_destroy(sim, q) && live_queues(sim) == baseline, "no_queues_left");
	munmap(ro_page, 4096);
	close(sim);
	hsaKmtCloseKFD();
	return tap_exit();
}
