// SPDX-License-Identifier: MIT
/*
 * kfdsync - inspect and wait on fences; report what kfdsync.ko attached to.
 *
 * How this program works: each subcommand is one function (cmd_<name>, in
 * <name>.c) that parses its own options with getopt_long and talks to
 * libkfdsync; what they share is in common.c. Errors are reported as
 * sentences on stderr (never a bare errno) and as exit codes documented in
 * kfdsync(1):
 *   0  success / every fence signalled without error
 *   1  a fence signalled with an error (wait), or the command failed
 *   2  usage error
 *   124 wait timed out
 */
#include <stdio.h>
#include <string.h>

#include "kfdsync.h"

#include "commands.h"
#include "common.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "info", cmd_info, "report the kfdsync module: ABI, kernel, hooks, limits" },
	{ "inspect", cmd_inspect, "show a sync_file's status, error and fences" },
	{ "wait", cmd_wait, "wait for sync_files to signal, with a timeout" },
	{ "merge", cmd_merge, "merge sync_files; show the result or pass it to a command" },
	{ "list", cmd_list, "list live contexts, events and timelines (fdinfo)" },
	{ "timeline", cmd_timeline, "run a command with fences of a CPU timeline, stepped" },
	{ "monitor", cmd_monitor, "follow fences' lives live: kfdsync.ko's tracepoints" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: %s COMMAND [ARGS...]\n\ncommands:\n", prog);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'%s COMMAND --help' describes a command; see kfdsync(1).\n", prog);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("kfdsync %s (ABI %d)\n", KFDSYNC_VERSION, KFDSYNC_ABI_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			/* The subcommand sees itself as argv[0]. */
			return commands[i].fn(argc - 1, argv + 1);
		}
	}
	fail("unknown command '%s'", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
