// SPDX-License-Identifier: MIT
/*
 * What the kfdsync commands share: see common.h.
 *
 * Fences named on the command line are an fd number this process inherited
 * ("3"), or another process's fd as /proc/PID/fd/N (duplicated with
 * pidfd_getfd(2), which needs ptrace permission over PID).
 *
 * --json output is valid JSON or nothing: it is written into a buffer
 * (struct json_out) and copied to stdout only when the whole command
 * succeeded; on failure stdout stays empty, the message goes to stderr and
 * the exit status is 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfdsync.h"

#include "common.h"

extern char **environ;

const char *const prog = "kfdsync";

void fail(const char *fmt, ...)
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

void fail_open(int err, const char *dev, const char *things, const char *limit)
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

int open_fence_arg(const char *arg)
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

void json_string(FILE *o, const char *s)
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

FILE *json_start(struct json_out *j)
{
	j->buf = NULL;
	j->len = 0;
	j->f = open_memstream(&j->buf, &j->len);
	if (!j->f)
		fail("cannot buffer the JSON output: %s", strerror(errno));
	return j->f;
}

int json_finish(struct json_out *j, int status)
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

int parse_json_opts(int argc, char **argv, void (*usage)(FILE *), bool *json)
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

int show_sync_file(FILE *o, int fd, const char *arg, bool json, bool first)
{
	struct kfdsync_fence_status *fences = NULL;
	struct kfdsync_sync_file_status st;
	int n;

	/* Every fence, however many: first how many, then all of them. */
	n = kfdsync_sync_file_get_status(fd, &st, NULL, 0);
	if (n > 0) {
		fences = calloc((size_t)n, sizeof(*fences));
		n = fences ? kfdsync_sync_file_get_status(fd, &st, fences, (unsigned int)n) :
			     -ENOMEM;
	}
	if (n < 0) {
		fail("%s: %s", arg, n == -EINVAL ? "not a sync_file" : strerror(-n));
		free(fences);
		return 1;
	}
	if (json) {
		fprintf(o, "%s{\"fd\": ", first ? "" : ",\n");
		json_string(o, arg);
		fprintf(o, ", \"name\": ");
		json_string(o, st.name);
		fprintf(o, ", \"status\": \"%s\", \"error\": %d, \"fences\": [",
			status_word(st.status), st.status < 0 ? st.status : 0);
		for (int i = 0; i < n; i++) {
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
		free(fences);
		return 0;
	}
	fprintf(o, "%s: sync_file \"%s\": %s", arg, st.name, status_word(st.status));
	if (st.status < 0)
		fprintf(o, " %d (%s)", st.status, strerror(-st.status));
	fprintf(o, ", %u fence%s\n", st.num_fences, st.num_fences == 1 ? "" : "s");
	for (int i = 0; i < n; i++) {
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
	free(fences);
	return 0;
}

int parse_uint(const char *opt, const char *arg, unsigned long max, unsigned long *out)
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

int run_with_fences(const struct fenced_cmd *c)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char fds_env[4096] = "";
	int ret, status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	for (unsigned int i = 0; i < c->nfences; i++) {
		size_t len = strlen(fds_env);

		/* dup2 onto the fence's fd in the child clears close-on-exec there. */
		posix_spawn_file_actions_adddup2(&fa, c->fences[i], c->first_fd + (int)i);
		snprintf(fds_env + len, sizeof(fds_env) - len, "%s%d", i ? " " : "",
			 c->first_fd + (int)i);
	}
	if (c->stdin_null)
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (c->sigmask) {
		posix_spawnattr_init(&attr);
		posix_spawnattr_setsigmask(&attr, c->sigmask);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	}
	setenv("KFDSYNC_FENCE_FDS", fds_env, 1);
	ret = posix_spawnp(&pid, c->argv[0], &fa, c->sigmask ? &attr : NULL, c->argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (c->sigmask)
		posix_spawnattr_destroy(&attr);
	if (ret) {
		fail("%s: %s", c->argv[0], strerror(ret));
		return 127;
	}
	ret = c->while_running ? c->while_running(pid, c->arg) : 0;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fail("waitpid: %s", strerror(errno));
			return 1;
		}
	}
	if (ret)
		return ret;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
