/* SPDX-License-Identifier: MIT */
/*
 * Module helpers for guest tests (they run as root in tests/vm/run's guest):
 * unload with retries, load this project's modules from $KFDSYNC_KMOD_DIR,
 * read and write kfdsync's parameters. Every helper returns 0 or -errno.
 */
#ifndef KFDSYNC_TESTS_KMOD_H
#define KFDSYNC_TESTS_KMOD_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KFDSYNC_PARAMS "/sys/module/kfdsync/parameters/"

static inline void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * delete_module(2) @name, up to @tries times 100 ms apart while it is
 * briefly held (EAGAIN/EWOULDBLOCK: still referenced; EBUSY: not live yet).
 */
static inline int kmod_unload(const char *name, int tries)
{
	for (int i = 0; i < tries; i++) {
		if (!syscall(SYS_delete_module, name, O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			break;
		if (i + 1 < tries)
			msleep(100);
	}
	return -errno;
}

/* finit_module(2) of $KFDSYNC_KMOD_DIR/@rel (e.g. "kmod/kfdsync.ko"). */
static inline int kmod_load_project(const char *rel, const char *params)
{
	const char *dir = getenv("KFDSYNC_KMOD_DIR");
	char path[4096];
	int fd, ret = 0;

	if (!dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params ? params : "", 0))
		ret = -errno;
	close(fd);
	return ret;
}

/* Read a small text file (sysfs) into @buf, without trailing newlines. */
static inline int read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

/* Read kfdsync's parameter @name into @buf (no newline). */
static inline int kfdsync_param_read(const char *name, char *buf, size_t size)
{
	char path[512];

	snprintf(path, sizeof(path), KFDSYNC_PARAMS "%s", name);
	return read_text(path, buf, size);
}

/* Write @text to the file @path (sysfs, procfs, tracefs), opened with @flags. */
static inline int write_text_flags(const char *path, const char *text, int flags)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

/* Write @val to a small text file (sysfs, debugfs). */
static inline int write_text(const char *path, const char *val)
{
	return write_text_flags(path, val, 0);
}

/* Write @what to <debugfs>/kfdsync/inject (kfdsync's test hooks). */
static inline int kfdsync_inject(const char *what)
{
	return write_text("/sys/kernel/debug/kfdsync/inject", what);
}

/* Write kfdsync's parameter @name through sysfs. */
static inline int kfdsync_param_write(const char *name, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), KFDSYNC_PARAMS "%s", name);
	return write_text(path, val);
}

/*
 * open(2) @path in a child that dropped CAP_SYS_ADMIN (as root without it:
 * kfdsync's system-wide limits spare only that capability). 0 if it
 * opened, or -errno.
 */
static inline int open_without_cap_sys_admin(const char *path)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (syscall(SYS_capget, &h, d))
			_exit(errno);
		d[0].effective &= ~(1U << CAP_SYS_ADMIN);
		d[0].permitted &= ~(1U << CAP_SYS_ADMIN);
		if (syscall(SYS_capset, &h, d))
			_exit(errno);
		_exit(open(path, O_RDWR | O_CLOEXEC) < 0 ? errno : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

#endif /* KFDSYNC_TESTS_KMOD_H */
