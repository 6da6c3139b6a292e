// SPDX-License-Identifier: MIT
/*
 * kfdsync - inspect and wait on fences; report what kfdsync.ko attached to.
 *
 * How this program works: each subcommand is one function (cmd_<name>)
 * that parses its own options with getopt_long and talks to libkfdsync.
 * Errors are reported as sentences on stderr (never a bare errno) and as
 * exit codes documented in kfdsync(1):
 *   0  success / every fence signalled without error
 *   1  a fence signalled with an error (wait), or the command failed
 *   2  usage error
 *   124 wait timed out
 * Fences named on the command line are an fd number this process inherited
 * ("3"), or another process's fd as /proc/PID/fd/N (duplicated with
 * pidfd_getfd(2), which needs ptrace permission over PID).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kfdsync.h"

#define EXIT_FENCE_ERROR 1
#define EXIT_USAGE 2
#define EXIT_TIMEOUT 124

extern char **environ;

static const char *prog = "kfdsync";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Why a kfdsync device could not be opened, in words: @dev is its path,
 * @things what each open makes ("contexts"), @limit the module parameter
 * that bounds them.
 */
static void fail_open(int err, const char *dev, const char *things, const char *limit)
{
	switch (-err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		fail("kfdsync module not loaded (no %s); try 'modprobe kfdsync'", dev);
		break;
	case EACCES:
	case EPERM:
		fail("no permission on %s (it belongs to group 'render': "
		     "join it, or install the kfdsync udev rule)", dev);
		break;
	case ENFILE:
		fail("too many kfdsync %s open (module parameter %s)", things, limit);
		break;
	default:
		fail("cannot open %s: %s", dev, strerror(-err));
	}
}

/*
 * Parse "N" (our fd) or "/proc/PID/fd/N" (another process's). Returns an fd
 * the caller closes, or -errno with a message printed.
 */
static int open_fence_arg(const char *arg)
{
	unsigned long pid, num;
	char *end;
	int pidfd, fd;

	errno = 0;
	num = strtoul(arg, &end, 10);
	if (*arg && !*end && !errno && num <= INT_MAX) {
		fd = dup((int)num);
		if (fd < 0) {
			fail("%s: not an open file descriptor of this process", arg);
			return -EBADF;
		}
		return fd;
	}
	if (sscanf(arg, "/proc/%lu/fd/%lu", &pid, &num) == 2 && pid <= INT_MAX &&
	    num <= INT_MAX) {
		pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
		if (pidfd < 0) {
			fail("%s: no process %lu (%s)", arg, pid, strerror(errno));
			return -errno;
		}
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)num, 0);
		close(pidfd);
		if (fd < 0) {
			int err = errno;

			if (err == EPERM)
				fail("%s: not allowed to take fds of process %lu "
				     "(needs ptrace permission)", arg, pid);
			else
				fail("%s: %s", arg, err == EBADF ?
				     "no such file descriptor" : strerror(err));
			return -err;
		}
		return fd;
	}
	fail("%s: expected a file descriptor number or /proc/PID/fd/N", arg);
	return -EINVAL;
}

static const char *status_word(int32_t status)
{
	return status > 0 ? "signalled" : status == 0 ? "pending" : "error";
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/*
 * Options of the commands that take only [--json] [--help]. Returns -1 to
 * go on, or the exit status to return now.
 */
static int parse_json_opts(int argc, char **argv, void (*usage)(FILE *), bool *json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	*json = false;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			*json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	return -1;
}

static void usage_info(FILE *f)
{
	fprintf(f, "usage: %s info [--json]\n"
		"Report the kfdsync module: ABI, kernel, hooks on amdkfd (or relay\n"
		"mode), and limits.\n", prog);
}

static int cmd_info(int argc, char **argv)
{
	struct kfdsync_module_info mi;
	struct kfdsync_ctx *ctx;
	bool json;
	int c, ret;

	c = parse_json_opts(argc, argv, usage_info, &json);
	if (c >= 0)
		return c;
	if (optind != argc) {
		usage_info(stderr);
		return EXIT_USAGE;
	}
	ret = kfdsync_ctx_new(&ctx);
	if (ret) {
		fail_open(ret, "/dev/kfdsync", "contexts", "max_contexts");
		return 1;
	}
	ret = kfdsync_ctx_get_module_info(ctx, &mi);
	kfdsync_ctx_free(ctx);
	if (ret == -EPROTO) {
		fail("the loaded kfdsync module speaks another ABI; this tool needs ABI %d",
		     KFDSYNC_ABI_VERSION);
		return 1;
	}
	if (ret) {
		fail("cannot query the kfdsync module: %s", strerror(-ret));
		return 1;
	}

	const char *mode = (mi.flags & KFDSYNC_INFO_RELAY_FORCED) ? "relay (forced)" :
			   !(mi.flags & KFDSYNC_INFO_AMDKFD_PRESENT) ? "waiting for amdgpu" :
			   mi.hooks ? "hooks" : "relay";

	if (json) {
		printf("{\"abi_version\": %u, \"kernel\": ", mi.abi_version);
		json_string(mi.release);
		printf(", \"kernel_version\": \"%u.%u.%u\", \"mode\": ",
		       mi.kernel_version >> 16, (mi.kernel_version >> 8) & 0xff,
		       mi.kernel_version & 0xff);
		json_string(mode);
		printf(", \"amdkfd_present\": %s, \"hooks\": [",
		       (mi.flags & KFDSYNC_INFO_AMDKFD_PRESENT) ? "true" : "false");
		for (uint32_t bit = 1, n = 0; bit; bit <<= 1) {
			if (!(mi.hooks_supported & bit) || !kfdsync_hook_name(bit))
				continue;
			printf("%s{\"name\": \"%s\", \"attached\": %s}", n++ ? ", " : "",
			       kfdsync_hook_name(bit), (mi.hooks & bit) ? "true" : "false");
		}
		printf("], \"limits\": {\"max_contexts\": %u, \"max_events\": %u, "
		       "\"max_fences\": %u, \"watchdog_ms\": %u, \"watchdog_max_ms\": %u}}\n",
		       mi.max_contexts, mi.max_events, mi.max_fences, mi.watchdog_ms,
		       mi.watchdog_max_ms);
		return 0;
	}
	printf("kfdsync ABI %u on Linux %s\n", mi.abi_version, mi.release);
	printf("mode:     %s\n", mode);
	printf("hooks:   ");
	for (uint32_t bit = 1; bit; bit <<= 1) {
		if ((mi.hooks_supported & bit) && kfdsync_hook_name(bit))
			printf(" %s%s", kfdsync_hook_name(bit),
			       (mi.hooks & bit) ? "" : "(detached)");
	}
	printf("\nlimits:   %u contexts, %u events and %u pending fences per context\n",
	       mi.max_contexts, mi.max_events, mi.max_fences);
	printf("watchdog: %u ms by default, at most %u ms\n", mi.watchdog_ms,
	       mi.watchdog_max_ms);
	return 0;
}

static void usage_inspect(FILE *f)
{
	fprintf(f, "usage: %s inspect [--json] FD|/proc/PID/fd/N...\n"
		"Show a sync_file's status, error and fences.\n", prog);
}

/* Print sync_file @fd (called @arg) as inspect does; 0, or 1 with a message. */
static int show_sync_file(int fd, const char *arg, bool json, bool first)
{
	struct kfdsync_fence_status fences[64];
	struct kfdsync_sync_file_status st;
	int n, ret = 0;

	n = kfdsync_sync_file_get_status(fd, &st, fences, 64);
	if (n < 0) {
		fail("%s: %s", arg, n == -EINVAL ? "not a sync_file" : strerror(-n));
		return 1;
	}
	if (json) {
		printf("%s{\"fd\": ", first ? "" : ",\n");
		json_string(arg);
		printf(", \"name\": ");
		json_string(st.name);
		printf(", \"status\": \"%s\", \"error\": %d, \"fences\": [",
		       status_word(st.status), st.status < 0 ? st.status : 0);
		for (int i = 0; i < n && i < 64; i++) {
			printf("%s{\"driver\": ", i ? ", " : "");
			json_string(fences[i].driver);
			printf(", \"timeline\": ");
			json_string(fences[i].timeline);
			printf(", \"status\": \"%s\", \"error\": %d, \"timestamp_ns\": %" PRIu64 "}",
			       status_word(fences[i].status),
			       fences[i].status < 0 ? fences[i].status : 0,
			       fences[i].timestamp_ns);
		}
		printf("]}");
		return 0;
	}
	printf("%s: sync_file \"%s\": %s", arg, st.name, status_word(st.status));
	if (st.status < 0)
		printf(" %d (%s)", st.status, strerror(-st.status));
	printf(", %u fence%s\n", st.num_fences, st.num_fences == 1 ? "" : "s");
	for (int i = 0; i < n && i < 64; i++) {
		printf("  %-10s %-32s %s", fences[i].driver, fences[i].timeline,
		       status_word(fences[i].status));
		if (fences[i].status < 0)
			printf(" %d (%s)", fences[i].status, strerror(-fences[i].status));
		if (fences[i].status != 0 && fences[i].timestamp_ns)
			printf(" at %" PRIu64 ".%06" PRIu64 " s",
			       fences[i].timestamp_ns / 1000000000,
			       fences[i].timestamp_ns % 1000000000 / 1000);
		putchar('\n');
	}
	if (n > 64)
		printf("  ... %d more\n", n - 64);
	return ret;
}

static int inspect_one(const char *arg, bool json, bool first)
{
	int fd, ret;

	fd = open_fence_arg(arg);
	if (fd < 0)
		return 1;
	ret = show_sync_file(fd, arg, json, first);
	close(fd);
	return ret;
}

static int cmd_inspect(int argc, char **argv)
{
	bool json;
	int c, ret = 0;

	c = parse_json_opts(argc, argv, usage_inspect, &json);
	if (c >= 0)
		return c;
	if (optind == argc) {
		usage_inspect(stderr);
		return EXIT_USAGE;
	}
	if (json)
		printf("[");
	for (int i = optind; i < argc; i++)
		ret |= inspect_one(argv[i], json, i == optind);
	if (json)
		printf("]\n");
	return ret;
}

static void usage_wait(FILE *f)
{
	fprintf(f, "usage: %s wait [--timeout MS] FD|/proc/PID/fd/N...\n"
		"Wait until every named sync_file signals. Exit status: 0 all\n"
		"signalled without error, 1 one signalled with an error (or\n"
		"failure), 124 timed out.\n", prog);
}

static int cmd_wait(int argc, char **argv)
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

#define DEBUGFS_DIR "/sys/kernel/debug/kfdsync"
#define ARRAY_SIZE(a) ((int)(sizeof(a) / sizeof((a)[0])))

/*
 * One debugfs table: "#" comment lines, the last of which names the
 * columns, then rows of whitespace-separated columns. The columns come
 * from that header line, so the tables may grow. Two columns are free text
 * and may contain spaces: "comm", a process's name, followed only by
 * numbers and words without spaces; and "name" when it is the last column,
 * which takes the rest of the line.
 */
#define MAX_COLS 16

struct table {
	char names[MAX_COLS][32];
	const char *cols[MAX_COLS];
	int ncols;
	int comm_col;	/* or -1 */
	bool name_last;
};

static const char *const table_files[] = { "contexts", "events", "timelines" };

/* A "# col col ..." line of lowercase names: take it as @t's header. */
static void parse_header(const char *line, struct table *t)
{
	char copy[1024], *save, *tok;
	struct table h = { .comm_col = -1 };

	snprintf(copy, sizeof(copy), "%s", line + 1);
	for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (h.ncols == MAX_COLS || strlen(tok) >= sizeof(h.names[0]) ||
		    strspn(tok, "abcdefghijklmnopqrstuvwxyz_") != strlen(tok))
			return;	/* a summary line, not a header */
		if (!strcmp(tok, "comm"))
			h.comm_col = h.ncols;
		strcpy(h.names[h.ncols++], tok);
	}
	if (h.ncols < 2)
		return;
	h.name_last = !strcmp(h.names[h.ncols - 1], "name");
	*t = h;
	for (int i = 0; i < t->ncols; i++)
		t->cols[i] = t->names[i];
}

/* Join tokens [from, to) back into one string (they are adjacent in @line). */
static char *join(char **tok, int from, int to)
{
	for (int i = from + 1; i < to; i++)
		tok[i][-1] = ' ';
	return tok[from];
}

static bool is_number(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if ((*s < '0' || *s > '9') && *s != 'x' && !(*s >= 'a' && *s <= 'f'))
			return false;
	return true;
}

/* Split one row into @t->ncols fields; 0 or -1 if it does not fit. */
static int split_row(char *line, const struct table *t, char **f)
{
	int n = 0, fixed_after, comm_end;
	char *tok[128];

	for (char *save, *p = strtok_r(line, " \t\n", &save); p && n < 128;
	     p = strtok_r(NULL, " \t\n", &save))
		tok[n++] = p;
	if (n < t->ncols)
		return -1;
	if (t->comm_col < 0) {
		if (n != t->ncols && !t->name_last)
			return -1;
		for (int i = 0; i < t->ncols - 1; i++)
			f[i] = tok[i];
		f[t->ncols - 1] = join(tok, t->ncols - 1, n);
		return 0;
	}
	for (int i = 0; i < t->comm_col; i++)
		f[i] = tok[i];
	fixed_after = t->ncols - t->comm_col - 1 - (t->name_last ? 1 : 0);
	if (t->name_last) {
		/* comm ends where @fixed_after numbers in a row begin. */
		for (comm_end = t->comm_col + 1; comm_end + fixed_after < n; comm_end++) {
			int k = 0;

			while (k < fixed_after && is_number(tok[comm_end + k]))
				k++;
			if (k == fixed_after)
				break;
		}
		if (comm_end + fixed_after >= n)
			return -1;
	} else {
		comm_end = n - fixed_after;
	}
	f[t->comm_col] = join(tok, t->comm_col, comm_end);
	for (int i = 0; i < fixed_after; i++)
		f[t->comm_col + 1 + i] = tok[comm_end + i];
	if (t->name_last)
		f[t->ncols - 1] = join(tok, comm_end + fixed_after, n);
	return 0;
}

static void usage_list(FILE *f)
{
	fprintf(f, "usage: %s list [--json] [--debugfs DIR]\n"
		"List live kfdsync contexts, registered events and CPU timelines\n"
		"(from debugfs: needs root and debugfs at /sys/kernel/debug; or from\n"
		"DIR, a copy of " DEBUGFS_DIR ").\n", prog);
}

static int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "debugfs", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *dir = DEBUGFS_DIR;
	bool json = false, copy = false;
	int c;

	while ((c = getopt_long(argc, argv, "jd:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'd':
			dir = optarg;
			copy = true;
			break;
		case 'h':
			usage_list(stdout);
			return 0;
		default:
			usage_list(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage_list(stderr);
		return EXIT_USAGE;
	}
	if (access(dir, F_OK)) {
		if (errno == EACCES)
			fail("cannot read %s: debugfs is readable by root only", dir);
		else if (!copy &&
			 (access("/sys/kernel/debug/.", F_OK) || access("/dev/kfdsync", F_OK)))
			fail("no %s: is debugfs mounted and kfdsync loaded?", dir);
		else
			fail("no %s: %s", dir, strerror(errno));
		return 1;
	}
	if (json)
		printf("{");
	for (int ti = 0; ti < ARRAY_SIZE(table_files); ti++) {
		const char *title = table_files[ti];
		struct table t = { .comm_col = -1 };
		char path[4096], line[1024], raw[1024];
		unsigned int rows = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, title);
		f = fopen(path, "re");
		if (!f) {
			fail("cannot read %s: %s", path, strerror(errno));
			return 1;
		}
		if (json)
			printf("%s\"%s\": [", ti ? ", " : "", title);
		else
			printf("%s%s:\n", ti ? "\n" : "", title);
		while (fgets(line, sizeof(line), f)) {
			char *fields[MAX_COLS];

			if (line[0] == '#') {
				parse_header(line, &t);
				continue;
			}
			if (line[0] == '\n')
				continue;
			/* split_row() cuts @line up: keep it whole for the message. */
			memcpy(raw, line, sizeof(raw));
			if (!t.ncols || split_row(line, &t, fields)) {
				fail("%s: unexpected line '%s'%s", path, strtok(raw, "\n"),
				     t.ncols ? "" : " (no column header)");
				fclose(f);
				return 1;
			}
			if (json) {
				printf("%s{", rows ? ", " : "");
				for (int i = 0; i < t.ncols; i++) {
					printf("%s\"%s\": ", i ? ", " : "", t.cols[i]);
					json_string(fields[i]);
				}
				printf("}");
			} else {
				if (!rows)
					for (int i = 0; i < t.ncols; i++)
						printf("%s%-*s", i ? " " : "  ", i == t.ncols - 1 ?
						       0 : 10, t.cols[i]);
				if (!rows)
					putchar('\n');
				for (int i = 0; i < t.ncols; i++)
					printf("%s%-*s", i ? " " : "  ", i == t.ncols - 1 ? 0 : 10,
					       fields[i]);
				putchar('\n');
			}
			rows++;
		}
		fclose(f);
		if (json)
			printf("]");
		else if (!rows)
			printf("  (none)\n");
	}
	if (json)
		printf("}\n");
	return 0;
}

static int parse_uint(const char *opt, const char *arg, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || *out > max || arg[0] == '-') {
		fail("%s: expected a number up to %lu, got '%s'", opt, max, arg);
		return -EINVAL;
	}
	return 0;
}

static void usage_merge(FILE *f)
{
	fprintf(f, "usage: %s merge [--name NAME] [--json] FENCE FENCE... [-- CMD [ARGS...]]\n"
		"       %s merge [--name NAME] [--fd N] FENCE FENCE... -- CMD [ARGS...]\n"
		"Merge sync_files (FD or /proc/PID/fd/N) into one that signals when\n"
		"all have. Without CMD, show the merged sync_file as 'inspect' does.\n"
		"With CMD, run it with the merged sync_file as fd N (default 3, also\n"
		"in $KFDSYNC_FENCE_FDS). Exit status: CMD's; else 0, or 1 on failure.\n",
		prog, prog);
}

/* A new fd number @target >= 0 for the merged sync_file, for CMD. */
static int run_with_fence(int fence, int target, char **argv)
{
	posix_spawn_file_actions_t fa;
	char fds_env[16];
	int ret, status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	/* dup2 onto @target in the child clears close-on-exec there. */
	posix_spawn_file_actions_adddup2(&fa, fence, target);
	snprintf(fds_env, sizeof(fds_env), "%d", target);
	setenv("KFDSYNC_FENCE_FDS", fds_env, 1);
	ret = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		fail("%s: %s", argv[0], strerror(ret));
		return 127;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fail("waitpid: %s", strerror(errno));
			return 1;
		}
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int cmd_merge(int argc, char **argv)
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
		int fd = open_fence_arg(arg), m;

		if (fd < 0)
			goto fail;
		ret = kfdsync_sync_file_check(fd);
		if (ret != 1) {
			fail("%s: %s", arg, ret == 0 ? "not a sync_file" : strerror(-ret));
			close(fd);
			goto fail;
		}
		if (merged < 0) {
			merged = fd;
			continue;
		}
		m = kfdsync_sync_file_merge(name, merged, fd);
		close(fd);
		if (m < 0) {
			fail("cannot merge %s: %s", arg, strerror(-m));
			goto fail;
		}
		close(merged);
		merged = m;
	}
	if (cmd) {
		ret = run_with_fence(merged, (int)target, cmd);
	} else {
		ret = show_sync_file(merged, "merged", json, true);
		if (json)
			putchar('\n');
	}
	close(merged);
	return ret;
fail:
	if (merged >= 0)
		close(merged);
	return 1;
}

static void usage_timeline(FILE *f)
{
	fprintf(f, "usage: %s timeline [--count N] [--interval MS] [--name NAME] -- CMD [ARGS...]\n"
		"Create a CPU timeline and run CMD with fences for values 1..N as fds\n"
		"3..N+2 (also listed in $KFDSYNC_FENCE_FDS). Advance the timeline by\n"
		"one every MS milliseconds (default 1000; 0: never) while CMD runs;\n"
		"when CMD exits, the timeline is closed and fences still pending\n"
		"signal with an error (-ENOENT). Exit status: CMD's.\n", prog);
}

static int cmd_timeline(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 'i' },
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned long count = 1, interval = 1000;
	posix_spawn_file_actions_t fa;
	struct kfdsync_timeline *tl;
	const char *name = "kfdsync-cli";
	char fds_env[4096] = "";
	int c, ret, status;
	int fences[64];
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+c:i:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_uint("--count", optarg, 64, &count) || !count) {
				if (!count)
					fail("--count: at least 1");
				return EXIT_USAGE;
			}
			break;
		case 'i':
			if (parse_uint("--interval", optarg, 3600000, &interval))
				return EXIT_USAGE;
			break;
		case 'n':
			name = optarg;
			if (strlen(name) > 31) {
				fail("--name: at most 31 bytes");
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage_timeline(stdout);
			return 0;
		default:
			usage_timeline(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind == argc) {
		usage_timeline(stderr);
		return EXIT_USAGE;
	}
	ret = kfdsync_timeline_new(&tl);
	if (ret) {
		fail_open(ret, "/dev/kfdsync_timeline", "timelines", "max_timelines");
		return 1;
	}
	posix_spawn_file_actions_init(&fa);
	for (unsigned long i = 0; i < count; i++) {
		size_t len = strlen(fds_env);

		fences[i] = kfdsync_timeline_create_fence(tl, (uint32_t)i + 1, name);
		if (fences[i] < 0) {
			fail("cannot create a fence: %s", strerror(-fences[i]));
			count = i;
			ret = 1;
			goto out;
		}
		/* dup2 onto 3.. in the child clears close-on-exec there. */
		posix_spawn_file_actions_adddup2(&fa, fences[i], 3 + (int)i);
		snprintf(fds_env + len, sizeof(fds_env) - len, "%s%lu", i ? " " : "", 3 + i);
	}
	setenv("KFDSYNC_FENCE_FDS", fds_env, 1);
	ret = posix_spawnp(&pid, argv[optind], &fa, NULL, argv + optind, environ);
	if (ret) {
		fail("%s: %s", argv[optind], strerror(ret));
		ret = 127;
		goto out;
	}
	/* The child has its copies; the timeline stays here. */
	for (unsigned long i = 0; i < count; i++)
		close(fences[i]);
	for (unsigned long step = 0;;) {
		struct timespec ts = { interval / 1000, (long)(interval % 1000) * 1000000 };

		if (waitpid(pid, &status, interval && step < count ? WNOHANG : 0) == pid)
			break;
		nanosleep(&ts, NULL);
		if (step < count && kfdsync_timeline_inc(tl, 1) == 0)
			step++;
	}
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	count = 0;
out:
	for (unsigned long i = 0; i < count; i++)
		close(fences[i]);
	posix_spawn_file_actions_destroy(&fa);
	kfdsync_timeline_free(tl);
	return ret;
}

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "info", cmd_info, "report the kfdsync module: ABI, kernel, hooks, limits" },
	{ "inspect", cmd_inspect, "show a sync_file's status, error and fences" },
	{ "wait", cmd_wait, "wait for sync_files to signal, with a timeout" },
	{ "merge", cmd_merge, "merge sync_files; show the result or pass it to a command" },
	{ "list", cmd_list, "list live contexts, events and timelines (debugfs)" },
	{ "timeline", cmd_timeline, "run a command with fences of a CPU timeline" },
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
		printf("kfdsync %d.%d (ABI %d)\n", KFDSYNC_LIB_VERSION_MAJOR,
		       KFDSYNC_LIB_VERSION_MINOR, KFDSYNC_ABI_VERSION);
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
