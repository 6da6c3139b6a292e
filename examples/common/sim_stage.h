/* SPDX-License-Identifier: MIT */
/*
 * The frames of kfdsync-egl and kfdsync-vulkan on the examples' compute
 * stage (compute.h): a queue of the test rig's GPU simulator (sim/,
 * kfdsim.ko), one KFD signal event that kfdsync exports, and per frame N
 * two command streams around the consumer's work (EGL or Vulkan):
 *
 *   A  the compute time, then fill the consumer's input with frame N's
 *      colour, then RELEASE_MEM on the event: sim_stage_submit_a() returns
 *      the event's next signal as a sync_file, the compute fence;
 *   B  WAIT_REG_MEM until the gate holds N + 1 (kfdsync writes it when the
 *      consumer's fence signals), then copy the consumer's output into the
 *      result buffer: sim_stage_submit_b().
 *
 * Each program keeps its own consumer, frame loop and command line; the
 * stage reads the options both take (struct frame_options).
 */
#ifndef KFDSYNC_EXAMPLES_SIM_STAGE_H
#define KFDSYNC_EXAMPLES_SIM_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <kfdsync.h>

#include "compute.h"

/* The options kfdsync-egl and kfdsync-vulkan both take (frame_options_usage). */
struct frame_options {
	int frames, width, height, compute_ms, hold_frame, hold_ms, error_frame, error_ms;
	int timeout_ms;
};

/* Their defaults. */
#define FRAME_OPTIONS_DEFAULT { .frames = 3, .width = 128, .height = 128, .compute_ms = 100, \
				.hold_frame = -1, .hold_ms = 2000, .error_frame = -1, \
				.error_ms = 300, .timeout_ms = 30000 }

/* The "Options:" part of both programs' --help. */
extern const char frame_options_usage[];

/*
 * Parse them into @o (which holds the defaults); @usage prints the
 * program's --help (and exits 0 after it). 0, or -1 after saying why.
 */
int frame_options_parse(struct frame_options *o, int argc, char **argv, const char *prog,
			void (*usage)(FILE *f));

/* Memory the queue and kfdsync write and the CPU reads. */
struct shared {
	uint64_t gate;		/* kfdsync writes N + 1 when frame N's consumer work is done */
	uint64_t gate_seen;	/* the gate as B passed it */
	uint64_t a_done_ns;	/* RELEASE_MEM timestamp: A filled the input */
	uint64_t b_pass_ns;	/* RELEASE_MEM timestamp: B passed its gate */
};

struct sim_stage {
	const struct frame_options *o;
	size_t bytes;			/* one image, width * height * 4 */
	struct kfdsync_ctx *ctx;
	bool kfd_open;
	struct stage_event ev;		/* A's RELEASE_MEM signals it */
	struct gpu *gpu;		/* the simulated queue */
	struct shared *shared;
	uint32_t *result;		/* B's copy of the consumer's output */
};

/*
 * Open /dev/kfd, a kfdsync context, the simulator and a queue; create the
 * event and register it with kfdsync; map the shared page and the result
 * buffer (@bytes). Returns 0 or -errno after an err(); either way
 * sim_stage_close() undoes what was done.
 */
int sim_stage_open(struct sim_stage *s, const struct frame_options *o, size_t bytes);

/* The queue first (also inside a wait), then the context: fences end. */
void sim_stage_close(struct sim_stage *s);

/*
 * A: the compute time (--compute-ms, or --hold-ms for --hold-frame and
 * --error-frame), then fill @input with @colour, then signal the event.
 * The fill comes last: a consumer that reads before the fence finds the
 * previous frame's colour. The fence gets a watchdog of --error-ms for
 * --error-frame (it ends with -ETIMEDOUT), else twice --timeout-ms.
 * *@submit_ns gets the time of submission. Returns the compute fence (a
 * sync_file, the caller's), or -errno.
 */
int sim_stage_submit_a(struct sim_stage *s, int n, void *input, uint32_t colour,
		       int64_t *submit_ns);

/*
 * B: wait for the gate (>= @n + 1), then copy @output into s->result.
 * *@end gets the queue position at which B is done. Returns 0 or -errno.
 */
int sim_stage_submit_b(struct sim_stage *s, int n, const void *output, uint64_t *end);

/* Wait until the queue has executed up to @pos, at most --timeout-ms. */
int sim_stage_wait(struct sim_stage *s, uint64_t pos);

/*
 * What frame @n looks like: @colour, a white square in the middle. On a
 * difference @why says which pixel.
 */
bool image_is_frame(const struct frame_options *o, const uint32_t *px, int n, uint32_t colour,
		    char *why, size_t len);

#endif /* KFDSYNC_EXAMPLES_SIM_STAGE_H */
