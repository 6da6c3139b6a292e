// SPDX-License-Identifier: MIT
/*
 * kfdsync-egl - a GL frame gated by a KFD compute fence with
 * EGL_ANDROID_native_fence_sync, and the compute queue gated by GL's own
 * native fence.
 *
 * How this program works
 * ======================
 *
 *   compute queue (kfdsim)          kfdsync.ko              EGL / GLES (llvmpipe)
 *   ----------------------          ----------              ---------------------
 *   A: compute time, then fill a
 *      GL buffer (persistently
 *      mapped) with frame N's
 *      colour; RELEASE_MEM on a
 *      KFD event  ----------------> a sync_file  ---------> eglCreateSyncKHR(
 *                                                            EGL_SYNC_NATIVE_FENCE_ANDROID,
 *                                                            the sync_file's fd);
 *                                                          eglWaitSyncKHR: the commands
 *                                                          after it wait for the fence:
 *                                                          upload the buffer into a
 *                                                          texture, draw a white square,
 *                                                          read the frame back into a
 *                                                          second persistent buffer
 *   B: WAIT_REG_MEM gate >= N+1 <-- imported: writes N+1 <-- a native fence of that work
 *      then copy GL's read-back       when it signals        (eglDupNativeFenceFDANDROID),
 *      into a result buffer                                  merged with the compute fence
 *
 * The GL commands read the buffer only when they run: if they did not wait
 * for the fence, they would find the previous frame's colour, which A
 * replaces only at the end of its compute time. B's copy shows frame N only
 * if B waited for GL. As in kfdsync-vulkan, GL's fence carries no upstream
 * error, so the fence handed to kfdsync is merged with the compute fence
 * (kfdsync_sync_file_accumulate()): a compute fence that ends with
 * -ETIMEDOUT (--error-frame) reaches B as GATE_ERROR.
 *
 * Needs EGL_KHR_fence_sync, EGL_KHR_wait_sync, EGL_ANDROID_native_fence_sync
 * and GL_EXT_buffer_storage: Mesa 25's llvmpipe has them on the surfaceless
 * platform when /dev/udmabuf exists (Linux 6.12 here); the compute side is
 * the test rig's simulated GPU (sim/), driven as in kfdsync-vulkan by the
 * stage both share (examples/common/sim_stage.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <GLES2/gl2ext.h>

#include <kfdsync.h>

#include "common.h"
#include "kfdsim.h"
#include "sim_stage.h"

#define PROG "kfdsync-egl"
#define MS 1000000LL

enum exit_code { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_SETUP = 2 };

struct gl {
	EGLDisplay dpy;
	EGLContext ctx;
	PFNEGLCREATESYNCKHRPROC create_sync;
	PFNEGLDESTROYSYNCKHRPROC destroy_sync;
	PFNEGLWAITSYNCKHRPROC wait_sync;
	PFNEGLDUPNATIVEFENCEFDANDROIDPROC dup_fence;
	PFNGLBUFFERSTORAGEEXTPROC buffer_storage;
	GLuint in_buf, out_buf, tex, fbo;
	void *in_map, *out_map;
	const char *renderer;
};

struct app {
	struct frame_options o;
	struct gl gl;
	size_t bytes;			/* one image, width * height * 4 */
	struct sim_stage sim;		/* the compute side (examples/common) */
};

/* RGBA bytes in memory, as GL_RGBA / GL_UNSIGNED_BYTE reads them. */
#define RGBA(r, g, b) (0xff000000u | (uint32_t)(b) << 16 | (uint32_t)(g) << 8 | (uint32_t)(r))
static const uint32_t colours[] = {
	RGBA(0xd0, 0x30, 0x30), RGBA(0x30, 0xa0, 0x40), RGBA(0x20, 0x50, 0xd0),
	RGBA(0xd0, 0xa0, 0x20), RGBA(0xa0, 0x30, 0xc0), RGBA(0x20, 0xb0, 0xb0),
};

static double rel_ms(int64_t from, int64_t to)
{
	return (double)(to - from) / 1e6;
}

static bool has_ext(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p && (p = strstr(p, name)); p += len)
		if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
			return true;
	return false;
}

/* ---- EGL and GL ---- */

static int gl_open(struct app *app)
{
	static const char *const need[] = {
		"EGL_KHR_fence_sync", "EGL_KHR_wait_sync", "EGL_ANDROID_native_fence_sync",
		"EGL_KHR_surfaceless_context",
	};
	struct gl *gl = &app->gl;
	PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
		(PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	const EGLint ctx_attribs[] = { EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE };
	const EGLint cfg_attribs[] = {
		EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE,
	};
	const char *exts;
	EGLConfig cfg;
	EGLint ncfg = 0;

	/* No window: Mesa's surfaceless platform. */
	if (get_platform_display)
		gl->dpy = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY,
					       NULL);
	if (!gl->dpy || !eglInitialize(gl->dpy, NULL, NULL)) {
		err("cannot initialise EGL on the surfaceless platform (EGL error 0x%x)",
		    eglGetError());
		gl->dpy = EGL_NO_DISPLAY;
		return -ENODEV;
	}
	exts = eglQueryString(gl->dpy, EGL_EXTENSIONS);
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!has_ext(exts, need[i])) {
			err("EGL has no %s (Mesa's llvmpipe has native fence sync only when "
			    "/dev/udmabuf exists: Linux 6.12 here)", need[i]);
			return -EOPNOTSUPP;
		}
	gl->create_sync = (PFNEGLCREATESYNCKHRPROC)eglGetProcAddress("eglCreateSyncKHR");
	gl->destroy_sync = (PFNEGLDESTROYSYNCKHRPROC)eglGetProcAddress("eglDestroySyncKHR");
	gl->wait_sync = (PFNEGLWAITSYNCKHRPROC)eglGetProcAddress("eglWaitSyncKHR");
	gl->dup_fence = (PFNEGLDUPNATIVEFENCEFDANDROIDPROC)
		eglGetProcAddress("eglDupNativeFenceFDANDROID");
	if (!gl->create_sync || !gl->destroy_sync || !gl->wait_sync || !gl->dup_fence) {
		err("EGL's fence functions are missing");
		return -EOPNOTSUPP;
	}
	if (!eglBindAPI(EGL_OPENGL_ES_API) ||
	    !eglChooseConfig(gl->dpy, cfg_attribs, &cfg, 1, &ncfg) || ncfg < 1) {
		err("no OpenGL ES 3 config (EGL error 0x%x)", eglGetError());
		return -ENODEV;
	}
	gl->ctx = eglCreateContext(gl->dpy, cfg, EGL_NO_CONTEXT, ctx_attribs);
	if (gl->ctx == EGL_NO_CONTEXT ||
	    !eglMakeCurrent(gl->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, gl->ctx)) {
		err("cannot make an OpenGL ES 3 context current (EGL error 0x%x)", eglGetError());
		return -ENODEV;
	}
	gl->renderer = (const char *)glGetString(GL_RENDERER);
	if (!has_ext((const char *)glGetString(GL_EXTENSIONS), "GL_EXT_buffer_storage")) {
		err("%s has no GL_EXT_buffer_storage (persistent buffers the compute queue "
		    "writes)", gl->renderer);
		return -EOPNOTSUPP;
	}
	gl->buffer_storage = (PFNGLBUFFERSTORAGEEXTPROC)eglGetProcAddress("glBufferStorageEXT");
	if (!gl->buffer_storage)
		return -EOPNOTSUPP;

	/* The compute's input and GL's read-back: persistent, coherent. */
	const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT_EXT |
				 GL_MAP_COHERENT_BIT_EXT;
	glGenBuffers(1, &gl->in_buf);
	glBindBuffer(GL_PIXEL_UNPACK_BUFFER, gl->in_buf);
	gl->buffer_storage(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)app->bytes, NULL, flags);
	gl->in_map = glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, (GLsizeiptr)app->bytes, flags);
	glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
	glGenBuffers(1, &gl->out_buf);
	glBindBuffer(GL_PIXEL_PACK_BUFFER, gl->out_buf);
	gl->buffer_storage(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)app->bytes, NULL, flags);
	gl->out_map = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, (GLsizeiptr)app->bytes, flags);
	glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
	if (!gl->in_map || !gl->out_map) {
		err("cannot map persistent GL buffers (GL error 0x%x)", glGetError());
		return -ENOMEM;
	}
	memset(gl->in_map, 0, app->bytes);
	glGenTextures(1, &gl->tex);
	glBindTexture(GL_TEXTURE_2D, gl->tex);
	glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, app->o.width, app->o.height);
	glGenFramebuffers(1, &gl->fbo);
	glBindFramebuffer(GL_FRAMEBUFFER, gl->fbo);
	glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, gl->tex, 0);
	if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
		err("the frame's framebuffer is incomplete");
		return -EIO;
	}
	return glGetError() == GL_NO_ERROR ? 0 : -EIO;
}

static void gl_close(struct gl *gl)
{
	if (gl->dpy == EGL_NO_DISPLAY)
		return;
	if (gl->ctx != EGL_NO_CONTEXT) {
		glFinish();
		if (gl->in_buf) {
			glBindBuffer(GL_PIXEL_UNPACK_BUFFER, gl->in_buf);
			glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
		}
		if (gl->out_buf) {
			glBindBuffer(GL_PIXEL_PACK_BUFFER, gl->out_buf);
			glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
		}
		glDeleteBuffers(1, &gl->in_buf);
		glDeleteBuffers(1, &gl->out_buf);
		glDeleteTextures(1, &gl->tex);
		glDeleteFramebuffers(1, &gl->fbo);
		eglMakeCurrent(gl->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
		eglDestroyContext(gl->dpy, gl->ctx);
	}
	eglTerminate(gl->dpy);
	gl->dpy = EGL_NO_DISPLAY;
}

/*
 * The frame's GL work behind the compute fence (borrowed: EGL gets a dup).
 * Returns GL's completion as a new sync_file (the caller's), or -errno;
 * *wait_ns gets how long eglWaitSyncKHR itself took (a driver that waits
 * on the CPU waits there).
 */
static int gl_frame(struct app *app, int compute_fence, int64_t *wait_ns)
{
	struct gl *gl = &app->gl;
	const int w = app->o.width, h = app->o.height;
	EGLint attribs[] = { EGL_SYNC_NATIVE_FENCE_FD_ANDROID, -1, EGL_NONE };
	EGLSyncKHR in, out;
	int64_t t0;
	int fd;

	attribs[1] = fcntl(compute_fence, F_DUPFD_CLOEXEC, 0);
	if (attribs[1] < 0)
		return -errno;
	in = gl->create_sync(gl->dpy, EGL_SYNC_NATIVE_FENCE_ANDROID, attribs);
	if (in == EGL_NO_SYNC_KHR) {
		close(attribs[1]);	/* EGL owns the fd only on success */
		err("eglCreateSyncKHR from the compute fence failed (EGL error 0x%x)",
		    eglGetError());
		return -EIO;
	}
	/* The fd is EGL's now. The GL commands after this wait for the fence. */
	t0 = now_ns();
	if (!gl->wait_sync(gl->dpy, in, 0)) {
		err("eglWaitSyncKHR failed (EGL error 0x%x)", eglGetError());
		gl->destroy_sync(gl->dpy, in);
		return -EIO;
	}
	*wait_ns = now_ns() - t0;
	gl->destroy_sync(gl->dpy, in);

	glBindFramebuffer(GL_FRAMEBUFFER, gl->fbo);
	glViewport(0, 0, w, h);
	/* The compute's pixels, read from the buffer when this command runs. */
	glBindBuffer(GL_PIXEL_UNPACK_BUFFER, gl->in_buf);
	glBindTexture(GL_TEXTURE_2D, gl->tex);
	glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
	glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
	/* A white square in the middle. */
	glEnable(GL_SCISSOR_TEST);
	glScissor(w * 3 / 8, h * 3 / 8, w / 4, h / 4);
	glClearColor(1.0f, 1.0f, 1.0f, 1.0f);
	glClear(GL_COLOR_BUFFER_BIT);
	glDisable(GL_SCISSOR_TEST);
	/* The frame, read back into the buffer the queue copies. */
	glBindBuffer(GL_PIXEL_PACK_BUFFER, gl->out_buf);
	glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
	glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);

	/* GL's completion as a native fence: flushed before it is duplicated. */
	attribs[0] = EGL_NONE;
	out = gl->create_sync(gl->dpy, EGL_SYNC_NATIVE_FENCE_ANDROID, attribs);
	if (out == EGL_NO_SYNC_KHR) {
		err("eglCreateSyncKHR for GL's completion failed (EGL error 0x%x)", eglGetError());
		return -EIO;
	}
	glFlush();
	fd = gl->dup_fence(gl->dpy, out);
	gl->destroy_sync(gl->dpy, out);
	if (fd < 0) {
		err("eglDupNativeFenceFDANDROID failed (EGL error 0x%x)", eglGetError());
		return -EIO;
	}
	if (glGetError() != GL_NO_ERROR) {
		close(fd);
		err("GL error in the frame's work");
		return -EIO;
	}
	return fd;
}

/* ---- a frame: A on the simulated queue, GL, then B (examples/common/sim_stage.c) ---- */

static int run_frame(struct app *app, int n)
{
	int compute_fence, gl_done, merged = -1, ret, cstate, gstate;
	int64_t submit_ns = 0, compute_ts = 0, gl_ts = 0, wait_ns = 0, dup_ns;
	uint64_t end, gate_seen;
	uint32_t *direct;
	char why[128];
	bool gl_ok, copy_ok, gl_stub;

	compute_fence = sim_stage_submit_a(&app->sim, n, app->gl.in_map, colours[n % 6],
					   &submit_ns);
	if (compute_fence < 0)
		return EXIT_FAIL;
	gl_done = gl_frame(app, compute_fence, &wait_ns);
	dup_ns = now_ns();
	if (gl_done < 0) {
		close(compute_fence);
		return EXIT_FAIL;
	}
	/* GL's fence carries no upstream error: merge the compute fence in. */
	ret = kfdsync_sync_file_accumulate("kfdsync-egl", &merged, gl_done);
	if (!ret)
		ret = kfdsync_sync_file_accumulate("kfdsync-egl", &merged, compute_fence);
	if (ret >= 0)
		ret = kfdsync_import_to_memory(app->sim.ctx, merged, &app->sim.shared->gate,
					       ret == 1 ? GATE_ERROR : (uint64_t)n + 1,
					       GATE_ERROR);
	if (!ret)
		ret = sim_stage_submit_b(&app->sim, n, app->gl.out_map, &end);
	if (ret) {
		err("frame %d: cannot hand GL's completion to the compute queue: %s", n,
		    strerror(-ret));
		ret = EXIT_FAIL;
		goto out;
	}
	ret = sim_stage_wait(&app->sim, end);
	if (ret) {
		err("frame %d: the compute queue did not finish within %d ms: %s", n,
		    app->o.timeout_ms, strerror(-ret));
		ret = EXIT_FAIL;
		goto out;
	}
	cstate = fence_state(compute_fence, &compute_ts);
	gstate = fence_state(gl_done, &gl_ts);
	gate_seen = app->sim.shared->gate_seen & 0xffffffffu;
	if (cstate < 0) {
		printf("frame %d: failed: the compute fence ended with an error: %s; GL's fence %s, "
		       "and the compute queue's gate read %s\n", n, strerror(-cstate),
		       gstate == 1 ? "signalled without one" : "did not",
		       gate_seen == GATE_ERROR ? "GATE_ERROR: the error reached it" : "no error");
		err("frame %d: the compute fence ended with an error (%s): the frame failed", n,
		    strerror(-cstate));
		ret = EXIT_FAIL;
		goto out;
	}
	/* GL's own view of the frame, and the queue's copy of its read-back. */
	direct = malloc(app->bytes);
	if (!direct) {
		ret = EXIT_FAIL;
		goto out;
	}
	glBindFramebuffer(GL_FRAMEBUFFER, app->gl.fbo);
	glReadPixels(0, 0, app->o.width, app->o.height, GL_RGBA, GL_UNSIGNED_BYTE, direct);
	gl_ok = image_is_frame(&app->o, direct, n, colours[n % 6], why, sizeof(why));
	if (!gl_ok)
		err("frame %d: GL's frame is not frame %d: %s (it did not wait for the compute "
		    "fence)", n, n, why);
	free(direct);
	copy_ok = image_is_frame(&app->o, app->sim.result, n, colours[n % 6], why, sizeof(why));
	if (!copy_ok)
		err("frame %d: the compute queue's copy is not frame %d: %s (it did not wait for "
		    "GL)", n, n, why);
	/* A driver that waits on the CPU (llvmpipe) hands out signalled stubs. */
	gl_stub = gl_ts < submit_ns;
	if (gl_stub)
		gl_ts = dup_ns;
	printf("frame %d: compute fence signalled %+.3f ms, eglWaitSyncKHR took %.3f ms, GL "
	       "done (native fence) %s%+.3f ms, queue passed the GL gate %+.3f ms after "
	       "submission (gate %" PRIu64 "); GL's frame %s, the queue's copy %s\n", n,
	       rel_ms(submit_ns, compute_ts), (double)wait_ns / 1e6,
	       gl_stub ? "duplicated signalled at " : "", rel_ms(submit_ns, gl_ts),
	       rel_ms(submit_ns, (int64_t)app->sim.shared->b_pass_ns), gate_seen,
	       gl_ok ? "is frame N" : "WRONG", copy_ok ? "is frame N" : "WRONG");
	ret = EXIT_OK;
	if (!gl_ok || !copy_ok || cstate != 1 || gstate != 1 || gate_seen != (uint64_t)n + 1)
		ret = EXIT_FAIL;
	if ((int64_t)app->sim.shared->a_done_ns > compute_ts || compute_ts > gl_ts ||
	    gl_ts > (int64_t)app->sim.shared->b_pass_ns) {
		err("frame %d: out of order: compute done %+.3f, its fence %+.3f, GL done %+.3f, "
		    "gate passed %+.3f ms", n, rel_ms(submit_ns, (int64_t)app->sim.shared->a_done_ns),
		    rel_ms(submit_ns, compute_ts), rel_ms(submit_ns, gl_ts),
		    rel_ms(submit_ns, (int64_t)app->sim.shared->b_pass_ns));
		ret = EXIT_FAIL;
	}
out:
	fflush(stdout);
	close(compute_fence);
	close(gl_done);
	if (merged >= 0)
		close(merged);
	return ret;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [OPTION]...\n"
"\n"
"Each frame's GL work waits for a KFD compute fence (kfdsync's sync_file as\n"
"an EGL_ANDROID_native_fence_sync sync, eglWaitSyncKHR), and the next compute\n"
"job waits for GL's native fence (imported into kfdsync, WAIT_REG_MEM).\n"
"\n"
"%s"
"\n"
"Needs kfdsync.ko and kfdsim.ko (the project's test guest), amdgpu's /dev/kfd,\n"
"and EGL with EGL_ANDROID_native_fence_sync on the surfaceless platform\n"
"(Mesa's llvmpipe with /dev/udmabuf) and GL_EXT_buffer_storage.\n"
"\n"
"Exit status: 0 every frame in order and right; 1 a frame failed; 2 bad\n"
"options, or no such EGL, kfdsync or simulator.\n", frame_options_usage);
}

int main(int argc, char **argv)
{
	struct app app = {
		.o = FRAME_OPTIONS_DEFAULT,
		.gl = { .dpy = EGL_NO_DISPLAY, .ctx = EGL_NO_CONTEXT },
	};
	int ret = EXIT_OK;

	if (frame_options_parse(&app.o, argc, argv, PROG, usage))
		return EXIT_SETUP;
	app.bytes = (size_t)app.o.width * (size_t)app.o.height * 4;
	if (gl_open(&app)) {
		gl_close(&app.gl);
		return EXIT_SETUP;
	}
	printf("egl: %s, EGL_ANDROID_native_fence_sync on the surfaceless platform\n",
	       app.gl.renderer);
	if (sim_stage_open(&app.sim, &app.o, app.bytes)) {
		ret = EXIT_SETUP;
		goto out;
	}
	printf("compute: simulated GPU (kfdsim), KFD event %u exported by kfdsync\n",
	       app.sim.ev.event.id);
	fflush(stdout);
	for (int n = 0; n < app.o.frames && ret == EXIT_OK; n++)
		ret = run_frame(&app, n);
	printf("summary: frames=%d result=%s\n", app.o.frames, ret == EXIT_OK ? "ok" : "failed");
out:
	sim_stage_close(&app.sim);
	gl_close(&app.gl);
	return ret;
}
