// SPDX-License-Identifier: MIT
/* kfdsync merge: merge sync_files; show the result or pass it to a command. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"

#include "commands.h"
#include "common.h"

static void usage_merge(FILE *f)
{
	fprintf(f, "usage: %s merge [--name NAME] [--json] FENCE FENCE... [-- CMD [ARGS...]]\n"
		"       %s merge [--name NAME] [--fd N] FENCE FENCE... -- CMD [ARGS...]\n"
		"Merge sync_files (FD or /proc/PID/fd/N) into one that signals when\n"
		"all have. Without CMD, show the merged sync_file as 'inspect' does.\n"
		"With CMD, run it with the merged sync_file as fd N (default 3, also\n"
		"in $KFDSYNC_FENCE_FDS). A FENCE that already ended with an error is\n"
		"reported (exit status 1; CMD is not run): the merge cannot carry it.\n"
		"Exit status: CMD's; else 0, or 1 on failure.\n",
		prog, prog);
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "fd", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned long target = 3;
	const char *name = NULL;
	bool json = false, fd_given = false;
	int c, first, nfences, merged = -1, ret;
	struct kfdsync_sync_file_status mst;
	const char *failed = NULL;
	int32_t failed_error = 0;
	bool lost = false;
	char **cmd = NULL;

	while ((c = getopt_long(argc, argv, "+n:f:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			name = optarg;
			if (strlen(name) > 31) {
				fail("--name: at most 31 bytes");
				return EXIT_USAGE;
			}
			break;
		case 'f':
			if (parse_uint("--fd", optarg, 1023, &target))
				return EXIT_USAGE;
			fd_given = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage_merge(stdout);
			return 0;
		default:
			usage_merge(stderr);
			return EXIT_USAGE;
		}
	}
	first = optind;
	for (nfences = 0; first + nfences < argc; nfences++) {
		if (!strcmp(argv[first + nfences], "--")) {
			cmd = argv + first + nfences + 1;
			argv[first + nfences] = NULL;
			break;
		}
	}
	if (nfences < 2 || (cmd && !*cmd)) {
		if (nfences < 2)
			fail("merge needs at least two sync_files");
		else
			fail("no command after '--'");
		usage_merge(stderr);
		return EXIT_USAGE;
	}
	if (cmd ? json : fd_given) {
		fail("%s makes sense only %s a command", cmd ? "--json" : "--fd",
		     cmd ? "without" : "with");
		return EXIT_USAGE;
	}

	for (int i = 0; i < nfences; i++) {
		const char *arg = argv[first + i];
		struct kfdsync_sync_file_status st;
		int fd = open_fence_arg(arg);

		if (fd < 0)
			goto fail;
		ret = kfdsync_sync_file_check(fd);
		if (ret != 1) {
			fail("%s: %s", arg, ret == 0 ? "not a sync_file" : strerror(-ret));
			close(fd);
			goto fail;
		}
		/*
		 * The kernel leaves fences that ended out of a merge, errors
		 * and all: an input that already failed is remembered here.
		 */
		if (kfdsync_sync_file_get_status(fd, &st, NULL, 0) >= 0 && st.status < 0 &&
		    !failed) {
			failed = arg;
			failed_error = st.status;
		}
		ret = kfdsync_sync_file_accumulate(name, &merged, fd);
		close(fd);
		if (ret < 0) {
			fail("cannot merge %s: %s", arg, strerror(-ret));
			goto fail;
		}
	}
	/* The merged sync_file does not carry it: say so, and hand nothing on. */
	if (failed && kfdsync_sync_file_get_status(merged, &mst, NULL, 0) >= 0 &&
	    mst.status >= 0) {
		fail("%s had already ended with error %d (%s), which a merged sync_file cannot "
		     "carry%s", failed, failed_error, strerror(-failed_error),
		     cmd ? ": not running the command" : "");
		if (cmd)
			goto fail;
		lost = true;
	}
	if (cmd) {
		struct fenced_cmd run = {
			.argv = cmd, .fences = &merged, .nfences = 1, .first_fd = (int)target,
		};

		ret = run_with_fences(&run);
	} else if (json) {
		struct json_out j;
		FILE *o = json_start(&j);

		ret = 1;
		if (o) {
			ret = show_sync_file(o, merged, "merged", true, true);
			fputc('\n', o);
			/* Valid JSON or nothing: a lost error fails the command. */
			ret = json_finish(&j, ret ? ret : lost ? EXIT_FENCE_ERROR : 0);
		}
	} else {
		ret = show_sync_file(stdout, merged, "merged", false, true);
	}
	close(merged);
	return ret ? ret : lost ? EXIT_FENCE_ERROR : 0;
fail:
	if (merged >= 0)
		close(merged);
	return 1;
}
