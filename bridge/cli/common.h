/* SPDX-License-Identifier: MIT */
/*
 * What the kfdsync commands share (common.c): messages, fence arguments,
 * numbers, --json output and printing a sync_file. Exit statuses are documented in kfdsync(1).
 */
#ifndef KFDSYNC_CLI_COMMON_H
#define KFDSYNC_CLI_COMMON_H

#include <stdbool.h>
#include <stdio.h>

#define EXIT_FENCE_ERROR 1
#define EXIT_USAGE 2
#define EXIT_TIMEOUT 124

/* The program's name in messages and usage lines. */
extern const char *const prog;

/* "kfdsync: " and the message on stderr, with a newline. */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Why a kfdsync device could not be opened (@err, -errno), in words: @dev
 * is its path, @things what each open makes ("contexts"), @limit the module
 * parameter that bounds them.
 */
void fail_open(int err, const char *dev, const char *things, const char *limit);

/*
 * A fence named on the command line: "N" (our fd) or "/proc/PID/fd/N"
 * (another process's). Returns an fd the caller closes, or -errno with a
 * message printed.
 */
int open_fence_arg(const char *arg);

/* Option @opt's value @arg, a number up to @max: 0, or -EINVAL with a message. */
int parse_uint(const char *opt, const char *arg, unsigned long max, unsigned long *out);

/*
 * Options of the commands that take only [--json] [--help]. Returns -1 to
 * go on, or the exit status to return now.
 */
int parse_json_opts(int argc, char **argv, void (*usage)(FILE *), bool *json);

/* @s as a JSON string, quotes included. */
void json_string(FILE *o, const char *s);

/*
 * --json output: everything goes into a memory buffer, and reaches stdout
 * only if the command succeeds (json_finish() with status 0).
 */
struct json_out {
	FILE *f;
	char *buf;
	size_t len;
};

/* Start buffering; NULL (with a message) if there is no memory. */
FILE *json_start(struct json_out *j);

/*
 * End buffering: with @status 0, copy the buffer to stdout. Returns the
 * command's exit status (1 if stdout could not take the output).
 */
int json_finish(struct json_out *j, int status);

/*
 * Print sync_file @fd (called @arg) as inspect does, to @o; 0, or 1 with a
 * message. With @json, one JSON object, preceded by ",\n" unless @first.
 */
int show_sync_file(FILE *o, int fd, const char *arg, bool json, bool first);

#endif
