// SPDX-License-Identifier: MIT
/* The simulated compute stage of kfdsync-egl and kfdsync-vulkan: see sim_stage.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "kfdsim.h"
#include "sim_stage.h"

#define MS 1000000LL
#define WHITE 0xffffffffu

int sim_stage_open(struct sim_stage *s, const struct frame_options *o, size_t bytes)
{
	int ret;

	*s = (struct sim_stage){ .o = o, .bytes = bytes, .sim_fd = -1 };
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS) {
		err("cannot open /dev/kfd (hsaKmtOpenKFD): is amdgpu loaded?");
		return -ENODEV;
	}
	s->kfd_open = true;
	ret = kfdsync_ctx_new(&s->ctx);
	if (ret) {
		err("cannot open a kfdsync context: %s%s", strerror(-ret),
		    ret == -ENOENT ? " (kfdsync.ko is not loaded)" : "");
		return ret;
	}
	s->sim_fd = kfdsim_open();
	if (s->sim_fd < 0) {
		err("cannot open " KFDSIM_DEVICE ": %s (the GPU simulator kfdsim.ko is loaded "
		    "only in the project's test guest)", strerror(-s->sim_fd));
		return s->sim_fd;
	}
	ret = kfdsim_queue_create(s->sim_fd, 16384, &s->queue, NULL);
	if (ret) {
		err("cannot create a simulated queue: %s", strerror(-ret));
		return ret;
	}
	ret = kfd_signal_event_new(s->ctx, &s->event);
	if (ret)
		return ret;
	s->shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	s->result = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (s->shared == MAP_FAILED || s->result == MAP_FAILED) {
		s->shared = NULL;
		s->result = NULL;
		return -ENOMEM;
	}
	return 0;
}

void sim_stage_close(struct sim_stage *s)
{
	if (s->sim_fd >= 0) {
		kfdsim_queue_destroy(s->sim_fd, s->queue);
		close(s->sim_fd);
	}
	kfdsync_ctx_free(s->ctx);
	if (s->event)
		hsaKmtDestroyEvent(s->event);
	if (s->kfd_open)
		hsaKmtCloseKFD();
	if (s->shared)
		munmap(s->shared, 4096);
	if (s->result)
		munmap(s->result, s->bytes);
}

int sim_stage_submit_a(struct sim_stage *s, int n, void *input, uint32_t colour,
		       int64_t *submit_ns)
{
	const struct frame_options *o = s->o;
	uint32_t dw[256];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct kfdsync_event_state st;
	int busy = n == o->hold_frame || n == o->error_frame ? o->hold_ms : o->compute_ms;
	int64_t watchdog = n == o->error_frame ? o->error_ms * MS : 2 * (int64_t)o->timeout_ms * MS;
	int ret;

	ret = kfdsync_event_get_state(s->ctx, s->event->EventId, &st);
	if (ret || st.age != s->signals) {
		err("frame %d: the event's age is not what was submitted (%s)", n,
		    ret ? strerror(-ret) : "a signal is missing");
		return ret ? ret : -EPROTO;
	}
	for (int left = busy; left > 0; left -= 60000)
		pm4_sim_delay(&b, (uint32_t)(left > 60000 ? 60000 : left) * 1000);
	pm4_dma_fill(&b, (uintptr_t)input, colour, s->bytes);
	pm4_release_mem(&b, (uintptr_t)&s->shared->a_done_ns, 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
			PM4_RELEASE_MEM_INT_NONE, 0);
	pm4_release_mem_event(&b, s->event->EventData.HWData2, s->event->EventId);
	*submit_ns = now_ns();
	ret = kfdsim_submit_buf(s->sim_fd, s->queue, &b, NULL);
	if (ret) {
		err("frame %d: cannot submit to the simulated queue: %s", n, strerror(-ret));
		return ret;
	}
	s->signals++;
	ret = kfdsync_event_export_sync_file(s->ctx, s->event->EventId, st.age, watchdog);
	if (ret < 0)
		err("frame %d: cannot export the event as a sync_file: %s", n, strerror(-ret));
	return ret;
}

int sim_stage_submit_b(struct sim_stage *s, int n, const void *output, uint64_t *end)
{
	uint32_t dw[64];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	int ret;

	pm4_wait_reg_mem(&b, (uintptr_t)&s->shared->gate, PM4_WAIT_GE, (uint32_t)n + 1,
			 0xffffffffu);
	pm4_release_mem(&b, (uintptr_t)&s->shared->b_pass_ns, 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
			PM4_RELEASE_MEM_INT_NONE, 0);
	pm4_dma_copy(&b, (uintptr_t)&s->shared->gate_seen, (uintptr_t)&s->shared->gate, 8);
	pm4_dma_copy(&b, (uintptr_t)s->result, (uintptr_t)output, s->bytes);
	ret = kfdsim_submit_buf(s->sim_fd, s->queue, &b, end);
	if (ret)
		err("frame %d: cannot submit to the simulated queue: %s", n, strerror(-ret));
	return ret;
}

bool image_is_frame(const struct frame_options *o, const uint32_t *px, int n, uint32_t colour,
		    char *why, size_t len)
{
	const int w = o->width, h = o->height;
	const struct { int x, y; uint32_t want; } probes[] = {
		{ 2, 2, colour }, { w - 3, h - 3, colour },
		{ w / 2, h / 2, WHITE }, { w / 8, h / 2, colour },
	};

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint32_t got = px[(size_t)probes[i].y * (size_t)w + (size_t)probes[i].x];

		if (got != probes[i].want) {
			snprintf(why, len, "pixel (%d, %d) is %08x, frame %d's is %08x",
				 probes[i].x, probes[i].y, got, n, probes[i].want);
			return false;
		}
	}
	return true;
}
