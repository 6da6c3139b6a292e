// SPDX-License-Identifier: MIT
/*
 * bench_smoke: the benchmark as a guest-suite program (CI): runs
 * "guest-run kfdsync_bench relay-mode --quick -n 3" (both modes, small
 * sizes, a few iterations; paths fixed at build time), passes its table
 * through as TAP diagnostics and reports one subtest per mode: the program
 * ran and wrote its JSON. Never a figure: benchmarks print, they do not
 * fail (docs/performance.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

/* The JSON part @mode wrote is complete (it ends with the closing brace). */
static int json_complete(const char *dir, const char *mode)
{
	char path[4096], buf[8] = "";
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/bench-%s.json", dir, mode);
	f = fopen(path, "r");
	if (!f)
		return 0;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	if (n > 3) {
		fseek(f, n - 3, SEEK_SET);
		if (!fread(buf, 1, 3, f))
			buf[0] = '\0';
	}
	fclose(f);
	return strstr(buf, "}") != NULL;
}

int main(void)
{
	const char *dir = getenv("KFDSYNC_RESULTS");
	char line[512], cmd[8192];
	int status, ok_h, ok_r;
	FILE *p;

	tap_skip_program_if("KFDSYNC_KFD_UNUSABLE");	/* no amdkfd to benchmark */
	tap_skip_program_if("KFDSYNC_SIM_UNUSABLE");	/* no GPU signal to time */
	printf("TAP version 13\n");
	if (!dir) {
		printf("1..1\nok 1 bench_smoke # SKIP not in the test guest (no KFDSYNC_RESULTS)\n");
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' --quick -n 3 2>&1", GUEST_RUN, KFDSYNC_BENCH,
		 RELAY_MODE);
	fflush(stdout);
	p = popen(cmd, "r");
	if (!p) {
		printf("1..1\nnot ok 1 bench_smoke (popen: %s)\n", strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), p))
		printf("# %s", line[0] == '#' ? line + 1 : line);
	status = pclose(p);
	ok_h = json_complete(dir, "hooks");
	ok_r = json_complete(dir, "relay");
	printf("%s 1 bench_smoke_exit_status (%d)\n",
	       WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "not ok",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	printf("%s 2 bench_smoke_hooks_json (%s)\n", ok_h ? "ok" : "not ok",
	       ok_h ? "complete" : "missing");
	printf("%s 3 bench_smoke_relay_json (%s)\n", ok_r ? "ok" : "not ok",
	       ok_r ? "complete" : "missing");
	printf("1..3\n");
	return ok_h && ok_r && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
