/* SPDX-License-Identifier: MIT */
/*
 * Other processes in tests.
 *
 * - reap(): wait for a child and give its wait status as a shell would,
 *   the exit code or 128 + the signal that killed it.
 * - spawn_child(): this very program again, re-executed as
 *   "PROGRAM --child ROLE FD" (a fresh process: its own mm, its own amdkfd
 *   process), talking to the parent over a socket pair; child_args() in the
 *   child's main() finds ROLE and the socket.
 * - msg_send()/msg_recv(): small messages over that socket, with up to
 *   CHILD_MSG_MAX_FDS file descriptors passed along (SCM_RIGHTS), over
 *   scm_send()/scm_recv(), which take any message and return -errno.
 */
#ifndef KFDSYNC_TESTS_CHILD_H
#define KFDSYNC_TESTS_CHILD_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define CHILD_MSG_MAX_FDS	200

/* A wait status as an exit code: the child's, or 128 + its signal. */
static inline int wait_status_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Wait for @pid: wait_status_code() of it, or -1 if waitpid() fails. */
static inline int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return wait_status_code(status);
}

/*
 * Send @len bytes of @msg with @n fds (at most CHILD_MSG_MAX_FDS; they stay
 * open here); 0, or -errno (EAGAIN when the socket is full and @flags has
 * MSG_DONTWAIT; EPIPE, not SIGPIPE, when the peer is gone).
 */
static inline int scm_send(int sock, const void *msg, size_t len, const int *fds,
			   unsigned int n, int flags)
{
	char control[CMSG_SPACE(sizeof(int) * CHILD_MSG_MAX_FDS)];
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (n > CHILD_MSG_MAX_FDS)
		return -EINVAL;
	memset(control, 0, sizeof(control));
	if (n) {
		struct cmsghdr *c;

		mh.msg_control = control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == (ssize_t)len ? 0 : -EIO;
}

/*
 * Receive one message into @msg (@len bytes) and its fds (close-on-exec)
 * into @fds, which has room for @max; *@n gets their number, fds beyond
 * @max are closed. Returns the bytes received, 0 at EOF, or -errno.
 */
static inline ssize_t scm_recv(int sock, void *msg, size_t len, int *fds, unsigned int max,
			       unsigned int *n, int flags)
{
	char control[CMSG_SPACE(sizeof(int) * CHILD_MSG_MAX_FDS)];
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	struct cmsghdr *c;
	ssize_t r;

	*n = 0;
	do
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		unsigned int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int), i;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds && *n < max)
				fds[(*n)++] = fd;
			else
				close(fd);
		}
	}
	return r;
}

/* The messages between a program and its children. */
struct msg {
	int32_t cmd;
	int32_t val;
	int64_t val64;
};

/* Send @cmd, @val and @n fds (they stay open here); bails out on failure. */
static inline void msg_send(int sock, int32_t cmd, int32_t val, const int *fds, unsigned int n)
{
	struct msg m = { .cmd = cmd, .val = val };
	int ret = scm_send(sock, &m, sizeof(m), fds, n, 0);

	if (ret)
		tap_bail("sendmsg: %s", strerror(-ret));
}

/*
 * Receive a message; its fds (if any, up to CHILD_MSG_MAX_FDS) into @fds,
 * their number into *@n. False when the peer is gone.
 */
static inline bool msg_recv(int sock, struct msg *m, int *fds, unsigned int *n)
{
	unsigned int k;
	ssize_t r = scm_recv(sock, m, sizeof(*m), fds, CHILD_MSG_MAX_FDS, &k, 0);

	if (n)
		*n = k;
	return r == (ssize_t)sizeof(*m);
}

/* This program's own path (children are this very binary). */
static inline const char *self_exe(void)
{
	static char exe[4096];
	ssize_t n;

	if (exe[0])
		return exe;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "/proc/self/exe";
	exe[n] = '\0';
	return exe;
}

/* Start this program as "--child @role FD"; *@sock gets our end. */
static inline pid_t spawn_child(const char *role, int *sock)
{
	const char *exe = self_exe();
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		char fdstr[16];
		int fd = dup(sv[1]);	/* without O_CLOEXEC */

		snprintf(fdstr, sizeof(fdstr), "%d", fd);
		execl(exe, exe, "--child", role, fdstr, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

/* In main(): whether this is a child of spawn_child(); its role and socket. */
static inline bool child_args(int argc, char **argv, const char **role, int *sock)
{
	if (argc != 4 || strcmp(argv[1], "--child"))
		return false;
	*role = argv[2];
	*sock = atoi(argv[3]);
	return true;
}

#endif /* KFDSYNC_TESTS_CHILD_H */
