// SPDX-License-Identifier: MIT
/* The frames of kfdsync-egl and kfdsync-vulkan on the compute stage: see sim_stage.h. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "sim_stage.h"

#define MS 1000000LL
#define WHITE 0xffffffffu

int sim_stage_open(struct sim_stage *s, const struct frame_options *o, size_t bytes)
{
	int ret;

	*s = (struct sim_stage){ .o = o, .bytes = bytes };
	ret = kfd_open(GPU_SIM);
	if (ret)
		return ret;
	s->kfd_open = true;
	ret = kfdsync_ctx_new(&s->ctx);
	if (ret) {
		err("cannot open a kfdsync context: %s%s", strerror(-ret),
		    ret == -ENOENT ? " (kfdsync.ko is not loaded)" : "");
		return ret;
	}
	ret = gpu_open(&s->gpu, GPU_SIM);
	if (ret)
		return ret;
	ret = stage_event_new(s->ctx, &s->ev);
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
	/* The queue first (also inside a wait), then the event and the context. */
	gpu_close(s->gpu);
	stage_event_free(s->ctx, &s->ev);
	kfdsync_ctx_free(s->ctx);
	if (s->kfd_open)
		kfd_close();
	if (s->shared)
		munmap(s->shared, 4096);
	if (s->result)
		munmap(s->result, s->bytes);
}

/* A's drawing: fill the consumer's input, then record when (a_done_ns). */
struct fill {
	struct sim_stage *s;
	void *input;
	uint32_t colour;
};

static void fill_input(struct pm4_buf *b, void *arg)
{
	struct fill *f = arg;

	pm4_dma_fill(b, (uintptr_t)f->input, f->colour, f->s->bytes);
	pm4_release_mem(b, (uintptr_t)&f->s->shared->a_done_ns, 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
			PM4_RELEASE_MEM_INT_NONE, 0);
}

int sim_stage_submit_a(struct sim_stage *s, int n, void *input, uint32_t colour,
		       int64_t *submit_ns)
{
	const struct frame_options *o = s->o;
	struct fill f = { .s = s, .input = input, .colour = colour };
	struct stage_job job = {
		.n = (unsigned int)n,
		.draw = fill_input,
		.arg = &f,
		/* The fill comes last: a consumer that reads early finds the old frame. */
		.draw_last = true,
		.busy_ms = (unsigned int)(n == o->hold_frame || n == o->error_frame ?
					  o->hold_ms : o->compute_ms),
		.watchdog_ns = n == o->error_frame ? o->error_ms * MS :
						     2 * (int64_t)o->timeout_ms * MS,
	};
	int fence = stage_submit(s->gpu, s->ctx, &s->ev, &job);

	*submit_ns = job.submit_ns;
	return fence;
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
	ret = gpu_submit(s->gpu, &b, end);
	if (ret)
		err("frame %d: cannot submit to the simulated queue: %s", n, strerror(-ret));
	return ret;
}

int sim_stage_wait(struct sim_stage *s, uint64_t pos)
{
	return gpu_wait_pos(s->gpu, pos, s->o->timeout_ms);
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

/* ---- the options both programs take ---- */

const char frame_options_usage[] =
"Options:\n"
"  -n, --frames=N       frames (default 3)\n"
"  -s, --size=WxH       image size (default 128x128)\n"
"  -c, --compute-ms=MS  compute time of a frame (default 100)\n"
"      --hold-frame=N   frame N's compute takes --hold-ms\n"
"      --hold-ms=MS     (default 2000)\n"
"      --error-frame=N  frame N's fence gets a watchdog of --error-ms, shorter\n"
"                       than its compute (--hold-ms): it ends with -ETIMEDOUT\n"
"      --error-ms=MS    (default 300)\n"
"  -t, --timeout-ms=MS  longest wait for the queue or the consumer\n"
"                       (default 30000)\n"
"  -h, --help           show this help and exit\n";

int frame_options_parse(struct frame_options *o, int argc, char **argv, const char *prog,
			void (*usage)(FILE *f))
{
	enum { OPT_HOLD_FRAME = 256, OPT_HOLD_MS, OPT_ERROR_FRAME, OPT_ERROR_MS };
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "compute-ms", required_argument, NULL, 'c' },
		{ "hold-frame", required_argument, NULL, OPT_HOLD_FRAME },
		{ "hold-ms", required_argument, NULL, OPT_HOLD_MS },
		{ "error-frame", required_argument, NULL, OPT_ERROR_FRAME },
		{ "error-ms", required_argument, NULL, OPT_ERROR_MS },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:s:c:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_int("--frames", optarg, 1, 100000, &o->frames))
				return -1;
			break;
		case 's': {
			char *x = strchr(optarg, 'x');

			if (!x) {
				err("--size: \"%s\" is not WxH", optarg);
				return -1;
			}
			*x = '\0';
			if (parse_int("--size width", optarg, 16, 4096, &o->width) ||
			    parse_int("--size height", x + 1, 16, 4096, &o->height))
				return -1;
			break;
		}
		case 'c':
			if (parse_int("--compute-ms", optarg, 0, 600000, &o->compute_ms))
				return -1;
			break;
		case OPT_HOLD_FRAME:
			if (parse_int("--hold-frame", optarg, 0, INT_MAX, &o->hold_frame))
				return -1;
			break;
		case OPT_HOLD_MS:
			if (parse_int("--hold-ms", optarg, 0, 600000, &o->hold_ms))
				return -1;
			break;
		case OPT_ERROR_FRAME:
			if (parse_int("--error-frame", optarg, 0, INT_MAX, &o->error_frame))
				return -1;
			break;
		case OPT_ERROR_MS:
			if (parse_int("--error-ms", optarg, 10, 60000, &o->error_ms))
				return -1;
			break;
		case 't':
			if (parse_int("--timeout-ms", optarg, 1, 3600000, &o->timeout_ms))
				return -1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return -1;
		}
	}
	if (optind < argc) {
		err("unexpected argument \"%s\"", argv[optind]);
		return -1;
	}
	if (o->error_frame >= 0 && o->error_ms >= o->hold_ms) {
		err("--error-ms (%d) must be shorter than --hold-ms (%d)", o->error_ms, o->hold_ms);
		return -1;
	}
	if (o->hold_ms >= o->timeout_ms) {
		err("--hold-ms (%d) must be shorter than --timeout-ms (%d)", o->hold_ms,
		    o->timeout_ms);
		return -1;
	}
	return 0;
}
