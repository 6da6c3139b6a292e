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
 *
 * --json output is valid JSON or nothing: it is written into a buffer
 * (struct json_out) and copied to stdout only when the whole command
 * succeeded; on failure stdout stays empty, the message goes to stderr and
 * the exit status is 1.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
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
 * No permission on @dev: say who may open it (its real owner, group and
 * mode) and what would let us, instead of guessing.
 */
static void fail_permission(const char *dev)
{
	char user[64], group[64];
	struct group *gr;
	struct passwd *pw;
	struct stat st;
	mode_t mode;

	if (stat(dev, &st)) {
		fail("no permission on %s (%s)", dev, strerror(errno));
		return;
	}
	pw = getpwuid(st.st_uid);
	gr = getgrgid(st.st_gid);
	snprintf(user, sizeof(user), "%s", pw ? pw->pw_name : "?");
	if (!pw)
		snprintf(user, sizeof(user), "%u", (unsigned int)st.st_uid);
	snprintf(group, sizeof(group), "%s", gr ? gr->gr_name : "?");
	if (!gr)
		snprintf(group, sizeof(group), "%u", (unsigned int)st.st_gid);
	mode = st.st_mode & 07777;
	if (st.st_gid != 0 && (mode & 060) == 060)
		fail("no permission on %s (owner %s, group %s, mode %04o): members of "
		     "group '%s' may open it; join it (e.g. 'sudo adduser $USER %s', then log "
		     "in again), or see kfdsync(1), PERMISSIONS", dev, user, group,
		     (unsigned int)mode, group, group);
	else if (st.st_uid == 0 && st.st_gid == 0 && !(mode & 066))
		fail("no permission on %s (owner %s, group %s, mode %04o): only root may open "
		     "it; the kfdsync udev rule (60-kfdsync.rules) gives it group 'render' "
		     "and mode 0660, see kfdsync(1), PERMISSIONS", dev, user, group,
		     (unsigned int)mode);
	else
		fail("no permission on %s (owner %s, group %s, mode %04o); see kfdsync(1), "
		     "PERMISSIONS", dev, user, group, (unsigned int)mode);
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
		fail_permission(dev);
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

static void json_string(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(o, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(o, "\\u%04x", *s);
		else
			fputc(*s, o);
	}
	fputc('"', o);
}

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
static FILE *json_start(struct json_out *j)
{
	j->buf = NULL;
	j->len = 0;
	j->f = open_memstream(&j->buf, &j->len);
	if (!j->f)
		fail("cannot buffer the JSON output: %s", strerror(errno));
	return j->f;
}

/*
 * End buffering: with @status 0, copy the buffer to stdout. Returns the
 * command's exit status (1 if stdout could not take the output).
 */
static int json_finish(struct json_out *j, int status)
{
	bool bad = fclose(j->f) != 0;

	if (status == 0 && bad) {
		fail("cannot buffer the JSON output");
		status = 1;
	}
	if (status == 0 && (fwrite(j->buf, 1, j->len, stdout) != j->len || fflush(stdout))) {
		fail("cannot write the output: %s", strerror(errno));
		status = 1;
	}
	free(j->buf);
	return status;
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
	struct kfdsync_module_status ms;
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
	if (!ret && kfdsync_ctx_get_module_status(ctx, &ms))
		memset(&ms, 0, sizeof(ms));
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
		struct json_out j;
		FILE *o = json_start(&j);

		if (!o)
			return 1;
		fprintf(o, "{\"abi_version\": %u, \"kernel\": ", mi.abi_version);
		json_string(o, mi.release);
		fprintf(o, ", \"kernel_version\": \"%u.%u.%u\", \"mode\": ",
			mi.kernel_version >> 16, (mi.kernel_version >> 8) & 0xff,
			mi.kernel_version & 0xff);
		json_string(o, mode);
		fprintf(o, ", \"amdkfd_present\": %s, \"hooks\": [",
			(mi.flags & KFDSYNC_INFO_AMDKFD_PRESENT) ? "true" : "false");
		for (uint32_t bit = 1, n = 0; bit; bit <<= 1) {
			if (!(mi.hooks_supported & bit) || !kfdsync_hook_name(bit))
				continue;
			fprintf(o, "%s{\"name\": \"%s\", \"attached\": %s}", n++ ? ", " : "",
				kfdsync_hook_name(bit), (mi.hooks & bit) ? "true" : "false");
		}
		fprintf(o, "], \"relay_reason\": ");
		json_string(o, ms.detail);
		fprintf(o, ", \"verified\": ");
		json_string(o, ms.verified);
		fprintf(o, ", \"hooks_missed\": %llu, \"limits\": {\"max_contexts\": %u, "
			"\"max_events\": %u, \"max_fences\": %u, \"watchdog_ms\": %u, "
			"\"watchdog_max_ms\": %u}, \"user\": {\"contexts\": %u, "
			"\"max_contexts\": %u, \"timelines\": %u, \"max_timelines\": %u, "
			"\"events\": %u, \"max_events\": %u, \"fences\": %u, \"max_fences\": %u}}\n",
			(unsigned long long)ms.hooks_missed, mi.max_contexts, mi.max_events,
			mi.max_fences, mi.watchdog_ms, mi.watchdog_max_ms, ms.user_contexts,
			ms.max_user_contexts, ms.user_timelines, ms.max_user_timelines,
			ms.user_events, ms.max_user_events, ms.user_fences, ms.max_user_fences);
		return json_finish(&j, 0);
	}
	printf("kfdsync ABI %u on Linux %s\n", mi.abi_version, mi.release);
	printf("mode:     %s\n", mode);
	if (ms.detail[0])
		printf("why:      %s (amdkfd verified for %s)\n", ms.detail,
		       ms.verified[0] ? ms.verified : "no release");
	printf("hooks:   ");
	for (uint32_t bit = 1; bit; bit <<= 1) {
		if ((mi.hooks_supported & bit) && kfdsync_hook_name(bit))
			printf(" %s%s", kfdsync_hook_name(bit),
			       (mi.hooks & bit) ? "" : "(detached)");
	}
	printf("\nlimits:   %u events and %u pending fences per context; per user %u contexts, "
	       "%u timelines, %u events, %u pending fences\n", mi.max_events, mi.max_fences,
	       ms.max_user_contexts, ms.max_user_timelines, ms.max_user_events,
	       ms.max_user_fences);
	printf("you hold: %u contexts, %u timelines, %u events, %u pending fences\n",
	       ms.user_contexts, ms.user_timelines, ms.user_events, ms.user_fences);
	if (ms.hooks_missed)
		printf("missed:   %llu hook hits (their signals end by watchdog)\n",
		       (unsigned long long)ms.hooks_missed);
	printf("watchdog: %u ms by default, at most %u ms\n", mi.watchdog_ms,
	       mi.watchdog_max_ms);
	return 0;
}

static void usage_inspect(FILE *f)
{
	fprintf(f, "usage: %s inspect [--json] FD|/proc/PID/fd/N...\n"
		"Show a sync_file's status, error and fences.\n", prog);
}

/*
 * Print sync_file @fd (called @arg) as inspect does, to @o; 0, or 1 with a
 * message.
 */
static int show_sync_file(FILE *o, int fd, const char *arg, bool json, bool first)
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
		fprintf(o, "%s{\"fd\": ", first ? "" : ",\n");
		json_string(o, arg);
		fprintf(o, ", \"name\": ");
		json_string(o, st.name);
		fprintf(o, ", \"status\": \"%s\", \"error\": %d, \"fences\": [",
			status_word(st.status), st.status < 0 ? st.status : 0);
		for (int i = 0; i < n && i < 64; i++) {
			fprintf(o, "%s{\"driver\": ", i ? ", " : "");
			json_string(o, fences[i].driver);
			fprintf(o, ", \"timeline\": ");
			json_string(o, fences[i].timeline);
			fprintf(o, ", \"status\": \"%s\", \"error\": %d, \"timestamp_ns\": %"
				PRIu64 "}", status_word(fences[i].status),
				fences[i].status < 0 ? fences[i].status : 0,
				fences[i].timestamp_ns);
		}
		fprintf(o, "]}");
		return 0;
	}
	fprintf(o, "%s: sync_file \"%s\": %s", arg, st.name, status_word(st.status));
	if (st.status < 0)
		fprintf(o, " %d (%s)", st.status, strerror(-st.status));
	fprintf(o, ", %u fence%s\n", st.num_fences, st.num_fences == 1 ? "" : "s");
	for (int i = 0; i < n && i < 64; i++) {
		fprintf(o, "  %-10s %-32s %s", fences[i].driver, fences[i].timeline,
			status_word(fences[i].status));
		if (fences[i].status < 0)
			fprintf(o, " %d (%s)", fences[i].status, strerror(-fences[i].status));
		if (fences[i].status != 0 && fences[i].timestamp_ns)
			fprintf(o, " at %" PRIu64 ".%06" PRIu64 " s",
				fences[i].timestamp_ns / 1000000000,
				fences[i].timestamp_ns % 1000000000 / 1000);
		fputc('\n', o);
	}
	if (n > 64)
		fprintf(o, "  ... %d more\n", n - 64);
	return ret;
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

static int cmd_inspect(int argc, char **argv)
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
 * and may contain spaces: "comm", a process's name, and "name" when it is
 * the last column, which takes the rest of the line.
 *
 * debugfs is for people, and this parser is a stopgap until the module
 * offers a stable query interface. comm is found by position: the module
 * prints each column padded to the width its header gives it ("%-16s "
 * for comm, which is at most 15 bytes), so comm is the text in that
 * field, spaces and digits included ("gst 1"). A row whose comm does not
 * fit its field falls back to a guess: comm ends where the expected run of
 * numbers begins (ambiguous for a comm ending in a number).
 */
#define MAX_COLS 16

struct table {
	char names[MAX_COLS][32];
	const char *cols[MAX_COLS];
	int width[MAX_COLS];	/* from the header: distance to the next column */
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

	int start[MAX_COLS];

	snprintf(copy, sizeof(copy), "%s", line + 1);
	for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (h.ncols == MAX_COLS || strlen(tok) >= sizeof(h.names[0]) ||
		    strspn(tok, "abcdefghijklmnopqrstuvwxyz_") != strlen(tok))
			return;	/* a summary line, not a header */
		if (!strcmp(tok, "comm"))
			h.comm_col = h.ncols;
		start[h.ncols] = (int)(tok - copy);
		strcpy(h.names[h.ncols++], tok);
	}
	if (h.ncols < 2)
		return;
	for (int i = 0; i < h.ncols; i++)
		h.width[i] = i + 1 < h.ncols ? start[i + 1] - start[i] : 0;
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

/*
 * Cut comm out of @line by position (see struct table): the columns
 * before it are single words, each padded to its header width. On
 * success, comm is NUL-terminated in place (trailing padding removed),
 * *@rest points after it and 0 is returned; -1 if the row does not have
 * that shape.
 */
static int cut_comm(char *line, const struct table *t, char **f, char **rest)
{
	size_t pos = 0, len = strlen(line), w;

	for (int i = 0; i < t->comm_col; i++) {
		size_t tl = strcspn(line + pos, " \t\n"), next;

		if (!tl || t->width[i] < 2)
			return -1;
		next = pos + (tl + 1 > (size_t)t->width[i] ? tl + 1 : (size_t)t->width[i]);
		/* Padding only, up to where the next column starts. */
		if (next >= len || line[next] == ' ' ||
		    strspn(line + pos + tl, " ") != next - pos - tl)
			return -1;
		f[i] = line + pos;
		f[i][tl] = '\0';
		pos = next;
	}
	w = (size_t)t->width[t->comm_col];
	/* comm fills its field, one space, then the next column. */
	if (w < 2 || pos + w >= len || line[pos + w - 1] != ' ' || line[pos + w] == ' ')
		return -1;
	f[t->comm_col] = line + pos;
	line[pos + w - 1] = '\0';
	for (char *e = line + pos + w - 2; e >= line + pos && *e == ' '; e--)
		*e = '\0';
	*rest = line + pos + w;
	return *f[t->comm_col] ? 0 : -1;
}

/* Split one row into @t->ncols fields; 0 or -1 if it does not fit. */
static int split_row(char *line, const struct table *t, char **f)
{
	int n = 0, fixed_after, comm_end;
	char *tok[128], copy[1024], *rest;

	/* comm by position first; the guess below only if that fails. */
	snprintf(copy, sizeof(copy), "%s", line);
	if (t->comm_col >= 0 && !t->name_last && cut_comm(line, t, f, &rest) == 0) {
		for (char *save, *p = strtok_r(rest, " \t\n", &save); p;
		     p = strtok_r(NULL, " \t\n", &save)) {
			if (t->comm_col + 1 + n >= t->ncols) {
				n = -1;
				break;
			}
			f[t->comm_col + 1 + n++] = p;
		}
		if (t->comm_col + 1 + n == t->ncols)
			return 0;
		n = 0;
	}
	if (t->comm_col >= 0 && t->name_last && cut_comm(line, t, f, &rest) == 0) {
		int i = t->comm_col + 1;
		char *save, *p = rest;

		for (; p && i < t->ncols - 1; i++) {
			p = strtok_r(i == t->comm_col + 1 ? rest : NULL, " \t\n", &save);
			f[i] = p;
		}
		if (p) {
			/* The last column, "name", is the rest of the line. */
			p = i == t->comm_col + 1 ? rest : save;
			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = '\0';
			f[i] = p;
			if (*p)
				return 0;
		}
	}
	strcpy(line, copy);

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
	int c, status = 0;
	struct json_out j;
	FILE *o = stdout;

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
	if (json) {
		o = json_start(&j);
		if (!o)
			return 1;
		fputc('{', o);
	}
	for (int ti = 0; ti < ARRAY_SIZE(table_files) && !status; ti++) {
		const char *title = table_files[ti];
		struct table t = { .comm_col = -1 };
		char path[4096], line[1024], raw[1024];
		unsigned int rows = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, title);
		f = fopen(path, "re");
		if (!f) {
			fail("cannot read %s: %s", path, strerror(errno));
			status = 1;
			break;
		}
		if (json)
			fprintf(o, "%s\"%s\": [", ti ? ", " : "", title);
		else
			fprintf(o, "%s%s:\n", ti ? "\n" : "", title);
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
				status = 1;
				break;
			}
			if (json) {
				fprintf(o, "%s{", rows ? ", " : "");
				for (int i = 0; i < t.ncols; i++) {
					fprintf(o, "%s\"%s\": ", i ? ", " : "", t.cols[i]);
					json_string(o, fields[i]);
				}
				fputc('}', o);
			} else {
				if (!rows)
					for (int i = 0; i < t.ncols; i++)
						fprintf(o, "%s%-*s", i ? " " : "  ",
							i == t.ncols - 1 ? 0 : 10, t.cols[i]);
				if (!rows)
					fputc('\n', o);
				for (int i = 0; i < t.ncols; i++)
					fprintf(o, "%s%-*s", i ? " " : "  ",
						i == t.ncols - 1 ? 0 : 10, fields[i]);
				fputc('\n', o);
			}
			rows++;
		}
		fclose(f);
		if (json)
			fputc(']', o);
		else if (!rows && !status)
			fprintf(o, "  (none)\n");
	}
	if (json) {
		fputs("}\n", o);
		status = json_finish(&j, status);
	}
	return status;
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
	} else if (json) {
		struct json_out j;
		FILE *o = json_start(&j);

		ret = 1;
		if (o) {
			ret = show_sync_file(o, merged, "merged", true, true);
			fputc('\n', o);
			ret = json_finish(&j, ret);
		}
	} else {
		ret = show_sync_file(stdout, merged, "merged", false, true);
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
	fprintf(f, "usage: %s timeline [--count N] [--interval MS] [--name NAME] [--stdin]\n"
		"                        [--watchdog MS] [--independent] [--verbose] -- CMD [ARGS...]\n"
		"Create a CPU timeline and run CMD with fences for values 1..N as fds\n"
		"3..N+2 (also listed in $KFDSYNC_FENCE_FDS). Steps signal the fences in\n"
		"order: one every MS milliseconds (--interval, default 1000; 0: never),\n"
		"one per SIGUSR1 to this process ($KFDSYNC_TIMELINE_PID), and, with\n"
		"--stdin, one per command read from standard input:\n"
		"  (empty line), step    signal the next fence\n"
		"  step K, K             signal the next K fences\n"
		"  end                   end every pending fence with an error (-ENOENT)\n"
		"  end K                 end fence K alone (needs --independent)\n"
		"SIGUSR2 also ends every pending fence. --watchdog MS ends a fence still\n"
		"pending MS ms after it was made (alone with --independent, else with all\n"
		"pending fences: they share one timeline). --independent puts each fence\n"
		"on a timeline of its own (its own fence context). Fences end with an\n"
		"error only by -ENOENT (their timeline closed) or, after the module's\n"
		"watchdog_ms, -ETIMEDOUT; see kfdsync-timeline(1). When CMD exits, fences\n"
		"still pending end with -ENOENT. Exit status: CMD's.\n", prog);
}

/* The fences of 'kfdsync timeline' and what may still happen to them. */
struct cli_timeline {
	struct kfdsync_timeline *tl[64];	/* [0] only, unless independent */
	bool independent, verbose;
	unsigned int count;			/* fences, values 1..count */
	unsigned int next;			/* fences before it are done */
	bool ended[64];				/* ended with -ENOENT */
	int64_t deadline_ns;			/* --watchdog: when fences end; or 0 */
};

static int64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool cli_timeline_done(const struct cli_timeline *t)
{
	return t->next >= t->count;
}

/* Skip fences that ended already. */
static void cli_timeline_advance(struct cli_timeline *t)
{
	while (t->next < t->count && t->ended[t->next])
		t->next++;
}

/* Signal the next @n pending fences (in order); 0 or -errno. */
static int cli_timeline_step(struct cli_timeline *t, unsigned long n)
{
	for (; n && !cli_timeline_done(t); n--) {
		int ret = kfdsync_timeline_inc(t->tl[t->independent ? t->next : 0], 1);

		if (ret) {
			fail("cannot advance the timeline: %s", strerror(-ret));
			return ret;
		}
		if (t->verbose)
			fprintf(stderr, "%s timeline: fence %u signalled\n", prog, t->next + 1);
		t->next++;
		cli_timeline_advance(t);
	}
	return 0;
}

/*
 * End fence @k (1-based; 0: every pending fence) with -ENOENT by closing
 * its timeline: the only error the timeline device can give on request.
 */
static void cli_timeline_end(struct cli_timeline *t, unsigned int k)
{
	if (k && (k <= t->next || t->ended[k - 1])) {
		fail("end %u: fence %u is not pending", k, k);
		return;
	}
	for (unsigned int i = t->next; i < t->count; i++) {
		if (t->ended[i] || (k && i + 1 != k))
			continue;
		t->ended[i] = true;
		if (t->verbose)
			fprintf(stderr, "%s timeline: fence %u ended with -ENOENT\n", prog, i + 1);
		if (t->independent) {
			kfdsync_timeline_free(t->tl[i]);
			t->tl[i] = NULL;
		}
	}
	if (!t->independent && !k) {
		kfdsync_timeline_free(t->tl[0]);
		t->tl[0] = NULL;
	}
	cli_timeline_advance(t);
}

/* One command line of --stdin. */
static void cli_timeline_command(struct cli_timeline *t, char *line)
{
	char *word = strtok(line, " \t\n"), *arg = word ? strtok(NULL, " \t\n") : NULL;
	unsigned long n = 1;

	if (!word || !strcmp(word, "step") || isdigit((unsigned char)word[0])) {
		const char *num = word && !strcmp(word, "step") ? arg : word;

		if (num && (parse_uint("step", num, 64, &n) || !n))
			return;
		cli_timeline_step(t, n);
	} else if (!strcmp(word, "end")) {
		if (arg && (parse_uint("end", arg, t->count, &n) || !n))
			return;
		if (arg && !t->independent)
			fail("end %s: the fences share one timeline, which can only end them all "
			     "('end'); use --independent to end one alone", arg);
		else
			cli_timeline_end(t, arg ? (unsigned int)n : 0);
	} else {
		fail("unknown command '%s' (step [K], K, end [K])", word);
	}
}

static int cmd_timeline(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 'i' },
		{ "name", required_argument, NULL, 'n' },
		{ "stdin", no_argument, NULL, 's' },
		{ "watchdog", required_argument, NULL, 'w' },
		{ "independent", no_argument, NULL, 'I' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned long count = 1, interval = 1000, watchdog = 0;
	struct cli_timeline t = { .count = 0 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	const char *name = "kfdsync-cli";
	char fds_env[4096] = "", pid_env[16];
	bool use_stdin = false, stdin_open;
	int c, ret, status = 0, sigfd = -1, pidfd = -1;
	int fences[64];
	int64_t next_step;
	sigset_t usr, old;
	size_t in_len = 0;
	char in[256];
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+c:i:n:sw:Ivh", opts, NULL)) != -1) {
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
			if (strlen(name) > KFDSYNC_NAME_MAX) {
				fail("--name: at most %d bytes", KFDSYNC_NAME_MAX);
				return EXIT_USAGE;
			}
			break;
		case 's':
			use_stdin = true;
			break;
		case 'w':
			if (parse_uint("--watchdog", optarg, 3600000, &watchdog) || !watchdog) {
				if (!watchdog)
					fail("--watchdog: at least 1 ms");
				return EXIT_USAGE;
			}
			break;
		case 'I':
			t.independent = true;
			break;
		case 'v':
			t.verbose = true;
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
	for (unsigned long i = 0; i < (t.independent ? count : 1); i++) {
		ret = kfdsync_timeline_new(&t.tl[i]);
		if (ret) {
			fail_open(ret, "/dev/kfdsync_timeline", "timelines", "max_timelines");
			for (unsigned long k = 0; k < i; k++)
				kfdsync_timeline_free(t.tl[k]);
			return 1;
		}
	}
	/* SIGUSR1/2 arrive through a signalfd; CMD gets the old mask back. */
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr, &old);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &old);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	posix_spawn_file_actions_init(&fa);
	for (unsigned long i = 0; i < count; i++) {
		size_t len = strlen(fds_env);

		/* With --independent, each fence is value 1 of its own timeline. */
		fences[i] = kfdsync_timeline_create_fence(t.tl[t.independent ? i : 0],
							  t.independent ? 1 : (uint32_t)i + 1, name);
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
	t.count = (unsigned int)count;
	if (watchdog)
		t.deadline_ns = cli_now_ns() + (int64_t)watchdog * 1000000;
	/* --stdin is ours: CMD reads nothing from it. */
	if (use_stdin)
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	setenv("KFDSYNC_FENCE_FDS", fds_env, 1);
	snprintf(pid_env, sizeof(pid_env), "%d", (int)getpid());
	setenv("KFDSYNC_TIMELINE_PID", pid_env, 1);
	sigfd = signalfd(-1, &usr, SFD_CLOEXEC);
	if (sigfd < 0) {
		fail("signalfd: %s", strerror(errno));
		ret = 1;
		goto out;
	}
	ret = posix_spawnp(&pid, argv[optind], &fa, &attr, argv + optind, environ);
	if (ret) {
		fail("%s: %s", argv[optind], strerror(ret));
		ret = 127;
		goto out;
	}
	/* The child has its copies; the timeline stays here. */
	for (unsigned long i = 0; i < count; i++)
		close(fences[i]);
	count = 0;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		fail("pidfd_open: %s", strerror(errno));
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
		ret = 1;
		goto out;
	}
	stdin_open = use_stdin;
	next_step = interval ? cli_now_ns() + (int64_t)interval * 1000000 : 0;
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = pidfd, .events = POLLIN },
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = stdin_open ? 0 : -1, .events = POLLIN },
		};
		int64_t now = cli_now_ns(), wake = -1;
		int timeout = -1;

		if (!cli_timeline_done(&t)) {
			if (next_step)
				wake = next_step;
			if (t.deadline_ns && (wake < 0 || t.deadline_ns < wake))
				wake = t.deadline_ns;
		}
		if (wake >= 0)
			timeout = wake <= now ? 0 : (int)((wake - now + 999999) / 1000000);
		if (poll(pfd, 3, timeout) < 0 && errno != EINTR) {
			fail("poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents)
			break;
		now = cli_now_ns();
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGUSR1)
					cli_timeline_step(&t, 1);
				else
					cli_timeline_end(&t, 0);
			}
		}
		if (pfd[2].revents) {
			ssize_t n = read(0, in + in_len, sizeof(in) - 1 - in_len);
			char *nl;

			if (n <= 0) {
				stdin_open = false;	/* EOF: the other steps go on */
				n = 0;
				if (in_len)	/* a last line without a newline */
					in[in_len++] = '\n';
			}
			in_len += (size_t)n;
			/* Whole lines only; a line too long for @in counts as one. */
			if (in_len == sizeof(in) - 1 && !memchr(in, '\n', in_len))
				in[in_len - 1] = '\n';
			while ((nl = memchr(in, '\n', in_len))) {
				size_t used = (size_t)(nl - in) + 1;

				*nl = '\0';
				cli_timeline_command(&t, in);
				memmove(in, in + used, in_len - used);
				in_len -= used;
			}
		}
		if (next_step && now >= next_step && !cli_timeline_done(&t)) {
			cli_timeline_step(&t, 1);
			next_step = now + (int64_t)interval * 1000000;
		}
		if (t.deadline_ns && now >= t.deadline_ns && !cli_timeline_done(&t)) {
			/* All fences were made together: they are all overdue. */
			cli_timeline_end(&t, 0);
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	for (unsigned long i = 0; i < count; i++)
		close(fences[i]);
	if (pidfd >= 0)
		close(pidfd);
	if (sigfd >= 0)
		close(sigfd);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Fences still pending end with -ENOENT. */
	for (unsigned int i = 0; i < 64; i++)
		kfdsync_timeline_free(t.tl[i]);
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
	{ "timeline", cmd_timeline, "run a command with fences of a CPU timeline, stepped" },
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
