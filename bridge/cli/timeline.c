// SPDX-License-Identifier: MIT
/* kfdsync timeline: run a command with fences of a CPU timeline, stepped. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kfdsync.h"

#include "commands.h"
#include "common.h"

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
	unsigned long interval_ms;		/* --interval: ms between steps; or 0 */
	bool use_stdin;				/* --stdin: steps read from stdin */
	int sigfd;				/* SIGUSR1 (step), SIGUSR2 (end) */
	int fds[64];				/* our fds of the fences, until CMD has them */
	unsigned int nfds;
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

/* Close our fds of the fences (CMD has its own). */
static void cli_timeline_close_fds(struct cli_timeline *t)
{
	for (unsigned int i = 0; i < t->nfds; i++)
		close(t->fds[i]);
	t->nfds = 0;
}

/*
 * While CMD (@pid) runs: step and end fences as the options say, until it
 * exits. run_with_fences() calls this, then waits for CMD.
 */
static int cli_timeline_run(pid_t pid, void *arg)
{
	struct cli_timeline *t = arg;
	bool stdin_open = t->use_stdin;
	int64_t next_step;
	size_t in_len = 0;
	char in[256];
	int pidfd;

	/* The child has its copies; the timeline stays here. */
	cli_timeline_close_fds(t);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		fail("pidfd_open: %s", strerror(errno));
		kill(pid, SIGTERM);
		return 1;
	}
	next_step = t->interval_ms ? cli_now_ns() + (int64_t)t->interval_ms * 1000000 : 0;
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = pidfd, .events = POLLIN },
			{ .fd = t->sigfd, .events = POLLIN },
			{ .fd = stdin_open ? 0 : -1, .events = POLLIN },
		};
		int64_t now = cli_now_ns(), wake = -1;
		int timeout = -1;

		if (!cli_timeline_done(t)) {
			if (next_step)
				wake = next_step;
			if (t->deadline_ns && (wake < 0 || t->deadline_ns < wake))
				wake = t->deadline_ns;
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

			if (read(t->sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGUSR1)
					cli_timeline_step(t, 1);
				else
					cli_timeline_end(t, 0);
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
				cli_timeline_command(t, in);
				memmove(in, in + used, in_len - used);
				in_len -= used;
			}
		}
		if (next_step && now >= next_step && !cli_timeline_done(t)) {
			cli_timeline_step(t, 1);
			next_step = now + (int64_t)t->interval_ms * 1000000;
		}
		if (t->deadline_ns && now >= t->deadline_ns && !cli_timeline_done(t)) {
			/* All fences were made together: they are all overdue. */
			cli_timeline_end(t, 0);
		}
	}
	close(pidfd);
	return 0;
}

/*
 * parse_uint() for an option that must be at least 1 (@unit after the 1 in
 * the message); a value that is not a number reads as 0 and says both.
 */
static int parse_positive(const char *opt, const char *arg, unsigned long max,
			  const char *unit, unsigned long *out)
{
	if (parse_uint(opt, arg, max, out))
		return -EINVAL;
	if (!*out) {
		fail("%s: at least 1%s", opt, unit);
		return -EINVAL;
	}
	return 0;
}

int cmd_timeline(int argc, char **argv)
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
	struct cli_timeline t = { .interval_ms = 1000, .sigfd = -1 };
	unsigned long count = 1, watchdog = 0;
	const char *name = "kfdsync-cli";
	sigset_t usr, old;
	char pid_env[16];
	int c, ret;

	while ((c = getopt_long(argc, argv, "+c:i:n:sw:Ivh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_positive("--count", optarg, 64, "", &count))
				return EXIT_USAGE;
			break;
		case 'i':
			if (parse_uint("--interval", optarg, 3600000, &t.interval_ms))
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
			t.use_stdin = true;
			break;
		case 'w':
			if (parse_positive("--watchdog", optarg, 3600000, " ms", &watchdog))
				return EXIT_USAGE;
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
	for (unsigned long i = 0; i < count; i++) {
		/* With --independent, each fence is value 1 of its own timeline. */
		int fd = kfdsync_timeline_create_fence(t.tl[t.independent ? i : 0],
						       t.independent ? 1 : (uint32_t)i + 1, name);

		if (fd < 0) {
			fail("cannot create a fence: %s", strerror(-fd));
			ret = 1;
			goto out;
		}
		t.fds[t.nfds++] = fd;
	}
	t.count = (unsigned int)count;
	if (watchdog)
		t.deadline_ns = cli_now_ns() + (int64_t)watchdog * 1000000;
	snprintf(pid_env, sizeof(pid_env), "%d", (int)getpid());
	setenv("KFDSYNC_TIMELINE_PID", pid_env, 1);
	t.sigfd = signalfd(-1, &usr, SFD_CLOEXEC);
	if (t.sigfd < 0) {
		fail("signalfd: %s", strerror(errno));
		ret = 1;
		goto out;
	}
	{
		/* Fences as fds 3..; --stdin is ours: CMD reads nothing from it. */
		struct fenced_cmd run = {
			.argv = argv + optind, .fences = t.fds, .nfences = t.nfds,
			.first_fd = 3, .sigmask = &old, .stdin_null = t.use_stdin,
			.while_running = cli_timeline_run, .arg = &t,
		};

		ret = run_with_fences(&run);
	}
out:
	cli_timeline_close_fds(&t);
	if (t.sigfd >= 0)
		close(t.sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Fences still pending end with -ENOENT. */
	for (unsigned int i = 0; i < 64; i++)
		kfdsync_timeline_free(t.tl[i]);
	return ret;
}
