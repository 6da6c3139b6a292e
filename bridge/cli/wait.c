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
		"Wait until every named sync_file signals. Exit status: 0 all\n"
		"signalled without error, 1 one signalled with an error (or\n"
		"failure), 124 timed out.\n", prog);
}

int cmd_wait(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int64_t timeout_ns = -1;
	int c, ret = 0;
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
	for (int i = optind; i < argc; i++) {
		struct kfdsync_sync_file_status st;
		int fd = open_fence_arg(argv[i]);
		int r;

		if (fd < 0)
			return 1;
		/* One deadline for all: later fences get what is left. */
		r = kfdsync_sync_file_wait(fd, timeout_ns);
		if (!r)
			r = kfdsync_sync_file_get_status(fd, &st, NULL, 0);
		close(fd);
		if (r == -ETIME) {
			fail("%s: timed out", argv[i]);
			return EXIT_TIMEOUT;
		}
		if (r < 0) {
			fail("%s: %s", argv[i], r == -EINVAL ? "not a sync_file" : strerror(-r));
			return 1;
		}
		if (st.status < 0) {
			fail("%s: signalled with error %d (%s)", argv[i], st.status,
			     strerror(-st.status));
			ret = EXIT_FENCE_ERROR;
		}
	}
	return ret;
}
