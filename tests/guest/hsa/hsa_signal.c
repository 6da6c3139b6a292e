// SPDX-License-Identifier: MIT
/*
 * hsa_signal: ROCr HSA signals as fences, and fences into HSA signals.
 *
 * How this program works: it initialises Debian's ROCr (libhsa-runtime64)
 * on the guest's CPU-only /dev/kfd and creates interrupt signals with
 * hsa_signal_create(): each is an amd_signal_t (its value) paired with a KFD
 * event (its mailbox). libkfdsync exports "the signal's value satisfies a
 * condition" as sync_files and eventfds (KFDSYNC_IOCTL_EXPORT_CONDITION).
 *
 * - CPU: another thread changes the value with hsa_signal_store_screlease(),
 *   which sets the signal's KFD event. After a store the event's age has
 *   advanced (kfdsync saw the hint and checked the value), so "not
 *   signalled" then is a real answer, not a race: a value that does not
 *   satisfy the condition leaves the fence pending, one that does signals
 *   it. Table-driven over the four conditions.
 * - GPU: a simulated queue (/dev/kfdsim) writes the next value of the
 *   signal, then writes the event id to the mailbox and raises the
 *   interrupt (RELEASE_MEM), through amdkfd's real interrupt path.
 * - Import: a vgem fence imported into a signal (subtract 1, set its
 *   event) releases a thread blocked in hsa_signal_wait_scacquire().
 * - Bad input gets the documented errnos; closing everything leaves no
 *   page pinned (nr_foll_pin_acquired == nr_foll_pin_released deltas).
 *
 * The files: hsa_signal_export.c (exports, both modes and hooks mode),
 * hsa_signal_hints.c (relay mode), hsa_signal_import.c (the vgem import),
 * this one (set-up, the example, the pins check over the whole program);
 * hsa_signal.h what they share. One program: ROCr is initialised once per
 * process, and the pins check spans every test. Tests register themselves
 * (tests/common/harness.h) and run in that order.
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <sys/wait.h>

#include "hsa_signal.h"

struct kfdsync_ctx *ctx;
hsa_signal_t armed[16];
unsigned int n_armed;
int sim = -1;
uint32_t queue;
bool relay_mode;

/* nr_foll_pin_* before hsa_init(), for the check at the end. */
static uint64_t acq0, rel0;
static bool have_vmstat;

static bool vmstat_pins(uint64_t *acquired, uint64_t *released)
{
	char name[64];
	unsigned long long v;
	int found = 0;
	FILE *f;

	/* Fold the per-CPU counter deltas first. */
	f = fopen("/proc/sys/vm/stat_refresh", "w");
	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return false;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired")) {
			*acquired = v;
			found++;
		} else if (!strcmp(name, "nr_foll_pin_released")) {
			*released = v;
			found++;
		}
	}
	fclose(f);
	return found == 2;
}

/* Run examples/hsa with @args; its exit status, its output in @out. */
static int run_example(const char *args, char *out, size_t size)
{
	char cmd[600];
	size_t len = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", HSA_EXAMPLE, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (len + 1 < size) {
		size_t n = fread(out + len, 1, size - 1 - len, p);

		if (!n)
			break;
		len += n;
	}
	out[len] = '\0';
	return pclose(p);
}

/*
 * examples/hsa runs its frames: export completion, import release; a
 * frame whose fence ended by its watchdog is not presented.
 */
TEST(example)
{
	char out[4096];
	int status = run_example("--frames 3", out, sizeof(out));

	if (status)
		tap_diag("%s", out);
	tap_ok(status == 0 && strstr(out, "compositor: frame 2: complete") &&
	       strstr(out, "stream: frame 2: buffer released"),
	       "example_external_semaphore (status %d)", status);
	status = run_example("--frames 3 --stall-frame 1 --watchdog-ms 300", out, sizeof(out));
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
	       strstr(out, "compositor: frame 0: complete, presenting") &&
	       strstr(out, "compositor: frame 1: ended with an error") &&
	       !strstr(out, "frame 1: complete"),
	       "example_error_is_not_presented (status %d)", status);
	if (!strstr(out, "frame 1: ended with an error"))
		tap_diag("%s", out);
}

static void require(void)
{
	scrub_hsa_env();
	require_sim_guest();
}

static void setup(void)
{
	struct kfdsync_module_info mi;
	int ret;

	have_vmstat = vmstat_pins(&acq0, &rel0);
	if (hsa_init() != HSA_STATUS_SUCCESS)
		tap_bail("hsa_init failed on /dev/kfd");
	ret = kfdsync_ctx_new(&ctx);
	if (ret)
		tap_bail("kfdsync_ctx_new: %s", strerror(-ret));
	ret = kfdsync_ctx_get_module_info(ctx, &mi);
	if (ret)
		tap_bail("kfdsync_ctx_get_module_info: %s", strerror(-ret));
	relay_mode = (mi.flags & KFDSYNC_INFO_RELAY_FORCED) || !mi.hooks;
	tap_diag("kfdsync in %s mode", relay_mode ? "relay" : "hooks");
	sim = kfdsim_open();
	if (sim < 0)
		tap_bail("kfdsim_open: %s", strerror(-sim));
	queue = queue_create(sim);
}

/* Everything closed leaves no page pinned. */
static void teardown(void)
{
	uint64_t acq1 = 0, rel1 = 0;

	/* Every armed condition held long ago: their handlers are done. */
	for (unsigned int i = 0; i < n_armed; i++)
		hsa_signal_destroy(armed[i]);
	kfdsim_queue_destroy(sim, queue);
	close(sim);
	kfdsync_ctx_free(ctx);
	hsa_shut_down();

	if (have_vmstat && vmstat_pins(&acq1, &rel1))
		tap_ok(acq1 - acq0 == rel1 - rel0 && acq1 - acq0 >= 8,
		       "pins_released (acquired +%" PRIu64 ", released +%" PRIu64 ")",
		       acq1 - acq0, rel1 - rel0);
	else
		tap_skip("no nr_foll_pin_* in /proc/vmstat", "pins_released");
}

int main(int argc, char **argv)
{
	harness_require = require;
	harness_setup = setup;
	harness_teardown = teardown;
	return harness_main(argc, argv);
}
