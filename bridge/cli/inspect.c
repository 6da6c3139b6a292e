// SPDX-License-Identifier: MIT
/* kfdsync inspect: a sync_file's status, error and fences. */
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"

static void usage_inspect(FILE *f)
{
	fprintf(f, "usage: %s inspect [--json] FD|/proc/PID/fd/N...\n"
		"Show a sync_file's status, error and fences.\n", prog);
}

static int inspect_one(FILE *o, const char *arg, bool json, bool first)
{
	int fd, ret;

	fd = open_fence_arg(arg);
	if (fd < 0)
		return 1;
	ret = show_sync_file(o, fd, arg, json, first);
	close(fd);
	return ret;
}

int cmd_inspect(int argc, char **argv)
{
	struct json_out j;
	bool json;
	int c, ret = 0;
	FILE *o = stdout;

	c = parse_json_opts(argc, argv, usage_inspect, &json);
	if (c >= 0)
		return c;
	if (optind == argc) {
		usage_inspect(stderr);
		return EXIT_USAGE;
	}
	if (json) {
		o = json_start(&j);
		if (!o)
			return 1;
		fputc('[', o);
	}
	/*
	 * Text: show every fence that can be shown. JSON: all or nothing, so
	 * stop at the first failure.
	 */
	for (int i = optind; i < argc && !(json && ret); i++)
		ret |= inspect_one(o, argv[i], json, i == optind);
	if (json) {
		fputs("]\n", o);
		ret = json_finish(&j, ret);
	}
	return ret;
}
