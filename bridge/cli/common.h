/* SPDX-License-Identifier: MIT */
/*
 * What the kfdsync commands share (common.c): messages, fence arguments,
 * numbers, --json output, printing a sync_file, and running a command with
 * fences. Exit statuses are documented in kfdsync(1).
 */
#ifndef KFDSYNC_CLI_COMMON_H
#define KFDSYNC_CLI_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

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

/* A command to run with fences: run_with_fences(). */
struct fenced_cmd {
	char **argv;		/* the command; argv[0] is looked up in $PATH */
	const int *fences;	/* fences[i] becomes the command's fd first_fd + i */
	unsigned int nfences;
	int first_fd;
	const sigset_t *sigmask;	/* the command's signal mask; NULL: ours */
	bool stdin_null;	/* the command's stdin is /dev/null */
	/*
	 * If not NULL, called with the command's pid while it runs; returns
	 * once the command has exited (or was killed): 0, or an exit status
	 * that replaces the command's.
	 */
	int (*while_running)(pid_t pid, void *arg);
	void *arg;
};

/*
 * Run @c->argv with its fences (listed in $KFDSYNC_FENCE_FDS) and wait for
 * it. Returns its exit status (128 + N if signal N killed it), 127 if it
 * could not be started, 1 if it could not be waited for, or what
 * @c->while_running returned if not 0. The fences stay the caller's.
 */
int run_with_fences(const struct fenced_cmd *c);

#endif
