// SPDX-License-Identifier: MIT
/* kfdsync wait: wait until sync_files signal, with a timeout. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"

#include "commands.h"
#include "common.h"

static void usage_wait(FILE *f)
{
	fprintf(f, "usage: %s wait [--timeout MS] FD|/proc/PID/fd/N...\n"
		"Wait until every named sync_file signals, within MS in total. Exit\n"
		"status: 0 all signalled without error, 1 one signalled with an\n"
		"error (or failure), 124 timed out.\n", prog);
}

int cmd_wait(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int64_t timeout_ns = -1;
	int c, i, n, r, ret = 0, *fds = NULL;
	int32_t *status = NULL;
	char *end;

	while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': {
			long long ms;

			errno = 0;
			ms = strtoll(optarg, &end, 10);
			if (!*optarg || *end || errno || ms < 0 ||
			    ms > INT64_MAX / 1000000) {
				fail("--timeout: expected milliseconds, got '%s'", optarg);
				return EXIT_USAGE;
			}
			timeout_ns = ms * 1000000;
			break;
		}
		case 'h':
			usage_wait(stdout);
			return 0;
		default:
			usage_wait(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind == argc) {
		usage_wait(stderr);
		return EXIT_USAGE;
	}
	n = argc - optind;
	fds = calloc((size_t)n, sizeof(*fds));
	status = calloc((size_t)n, sizeof(*status));
	if (!fds || !status) {
		fail("out of memory");
		ret = 1;
		goto out;
	}
	for (i = 0; i < n; i++)
		fds[i] = -1;
	for (i = 0; i < n; i++) {
		fds[i] = open_fence_arg(argv[optind + i]);
		if (fds[i] < 0) {
			ret = 1;
			goto out;
		}
		if (kfdsync_sync_file_check(fds[i]) != 1) {
			fail("%s: not a sync_file", argv[optind + i]);
			ret = 1;
			goto out;
		}
	}
	/* All of them at once, within one timeout in total. */
	r = kfdsync_sync_file_wait_many(fds, (unsigned int)n, KFDSYNC_WAIT_ALL, timeout_ns,
					status);
	if (r < 0 && r != -ETIME) {
		fail("%s", strerror(-r));
		ret = 1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *arg = argv[optind + i];

		if (status[i] < 0) {
			fail("%s: signalled with error %d (%s)", arg, status[i],
			     strerror(-status[i]));
			if (ret != EXIT_TIMEOUT)
				ret = EXIT_FENCE_ERROR;
		} else if (!status[i]) {
			fail("%s: timed out", arg);
			ret = EXIT_TIMEOUT;
		}
	}
out:
	for (i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(status);
	return ret;
}
