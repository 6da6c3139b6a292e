// SPDX-License-Identifier: MIT
/*
 * stress_reclaim: fences end on time while memory runs out.
 *
 * How this program works. kfdsync's fences can sit where memory management
 * waits for them (a dma_resv, a syncobj, a KMS commit), so what ends them —
 * the watchdog's worker, the import worker that writes what a GPU queue
 * waits for, the slot layer's worker — must not wait for memory: each of
 * their workqueues has a rescuer thread (WQ_MEM_RECLAIM), which the first
 * subtest looks for. Then a hog process (the first the OOM killer takes)
 * fills the guest's memory with anonymous pages until little is left, then
 * reads the kernel's modules through again and again, so that every page
 * of page cache comes from reclaim (there is no swap), while rounds of fences
 * with a short watchdog expire: CPU timeline fences, event fences with a
 * deadline, and imports of expiring fences into memory. Every fence must
 * end with -ETIMEDOUT and every import write its error value within a
 * bound; how late they ended and how hard the kernel reclaimed (direct
 * reclaim stalls and pages scanned, /proc/vmstat) are printed.
 *
 * Budget: --seconds (default 40 s of rounds, KFDSYNC_STRESS_SCALE scales it).
 */

#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "sim_test.h"
#include "stress.h"

#define WATCHDOG_MS	300
#define LATE_LIMIT_NS	(20 * S_NS)	/* under TCG, with reclaim: generous */
#define N_TIMELINES	8
#define TL_FENCES	32
#define EV_FENCES	32
#define N_IMPORTS	32
#define CHUNK		(16UL << 20)
#define FLOOR_KB	(64 * 1024)	/* the hog stops growing at this MemAvailable */
#define ERROR_VALUE	0xdeadULL

static struct stress_opts opts;

/* ---- the workqueues' rescuers ---- */

/*
 * Kernel threads of kfdsync's rescuers: named after the workqueue (6.1:
 * "kfdsync_watchdo", the name cut at 15 characters) or "kworker/R-<name>"
 * (6.12 and later, cut to "kworker/R-kfdsy").
 */
static int count_rescuers(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], comm[32];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (read_text(path, comm, sizeof(comm)))
			continue;
		n += !strncmp(comm, "kfdsync_", 8) || !strncmp(comm, "kworker/R-kfdsy", 15);
	}
	closedir(d);
	return n;
}

/* ---- the hog ---- */

static char hog_buf[1 << 20];

/* Read a file through: page cache the kernel must reclaim again. */
static int hog_read(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	int fd;

	(void)ftw;
	if (type != FTW_F || st->st_size < 65536)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (read(fd, hog_buf, sizeof(hog_buf)) > 0)
			;
		close(fd);
	}
	return 0;
}

/*
 * Fill memory with anonymous pages until MemAvailable is down to FLOOR_KB
 * (one byte to @ready then), and from then on read files through, so that
 * every page cache page comes from reclaim, and touch all the anonymous
 * pages again, until killed. The files: the kernel's modules, and the
 * libraries (the debug kernel has few modules: its guest reclaimed
 * nothing with those alone).
 */
static void hog_main(int ready)
{
	static char *chunks[4096];
	unsigned int n = 0, i;
	char dir[128];
	struct utsname u;
	size_t off;

	write_text("/proc/self/oom_score_adj", "1000");
	while (n < 4096 && meminfo_kb("MemAvailable") > FLOOR_KB) {
		char *c = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (c == MAP_FAILED)
			break;
		memset(c, 0x5a, CHUNK);
		chunks[n++] = c;
	}
	if (write(ready, "f", 1) != 1)
		_exit(1);
	uname(&u);
	snprintf(dir, sizeof(dir), "/lib/modules/%s/kernel", u.release);
	for (;;) {
		nftw(dir, hog_read, 16, FTW_PHYS);
		nftw("/usr/lib/x86_64-linux-gnu", hog_read, 16, FTW_PHYS);
		for (i = 0; i < n; i++)
			for (off = 0; off < CHUNK; off += 4096)
				chunks[i][off]++;
	}
}

static pid_t hog_start(void)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		tap_bail("pipe: %s", strerror(errno));
	pid = fork_or_bail();
	if (!pid) {
		close(p[0]);
		hog_main(p[1]);
	}
	close(p[1]);
	/* Full, or gone (the OOM killer): either way, go on. */
	if (read(p[0], &c, 1) != 1)
		tap_diag("the hog ended before it was full (status %d)", reap(pid));
	close(p[0]);
	return pid;
}

/* ---- rounds of expiring fences ---- */

struct round_stats {
	unsigned long fences, timed_out, late, imports, written;
	int64_t worst_late_ns;
};

/* How late the fence of sync_file @fd ended after @deadline; -1: not ended. */
static int64_t late_ns(int fd, int64_t deadline, int *status)
{
	struct sync_fence_info fi[1];
	int n = fence_infos(fd, fi, 1, NULL);

	*status = n == 1 ? fi[0].status : -1000;
	if (n != 1 || fi[0].status == 0)
		return -1;
	return (int64_t)fi[0].timestamp_ns - deadline;
}

static void account(struct round_stats *s, int fd, int64_t deadline)
{
	int status;
	int64_t late = late_ns(fd, deadline, &status);

	s->fences++;
	s->timed_out += status == -ETIMEDOUT;
	if (late > LATE_LIMIT_NS)
		s->late++;
	if (late > s->worst_late_ns)
		s->worst_late_ns = late;
}

/*
 * One round: N_TIMELINES timelines with TL_FENCES pending fences each, an
 * event with EV_FENCES exports whose deadlines are spread over the
 * watchdog, N_IMPORTS imports of timeline fences into memory; nothing
 * signals, so all of it ends by its watchdog.
 */
static void round_run(int ctx, uint32_t ev_id, uint64_t *words, struct round_stats *s)
{
	static int tl[N_TIMELINES], tl_fd[N_TIMELINES][TL_FENCES], ev_fd[EV_FENCES];
	int64_t tl_deadline, ev_deadline[EV_FENCES], until;
	unsigned long made = 0;
	int i, k;

	for (i = 0; i < N_IMPORTS; i++)
		words[i] = 0;
	tl_deadline = now_ns() + WATCHDOG_MS * MS_NS;
	for (i = 0; i < N_TIMELINES; i++) {
		tl[i] = raw_open(KFDSYNC_TL_DEVICE);
		for (k = 0; k < TL_FENCES; k++)
			tl_fd[i][k] = tl[i] >= 0 ? raw_tl_fence(tl[i], (uint32_t)k + 1) : -1;
	}
	for (i = 0; i < N_IMPORTS; i++) {
		int fence = tl_fd[i % N_TIMELINES][i / N_TIMELINES % TL_FENCES];
		struct kfdsync_import imp = {
			.fd = fence, .flags = KFDSYNC_IMPORT_MEMORY, .addr = (uintptr_t)&words[i],
			.value = 1, .error_value = ERROR_VALUE,
		};

		made += fence >= 0 && !raw_ioctl(ctx, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &imp);
	}
	for (i = 0; i < EV_FENCES; i++) {
		ev_deadline[i] = now_ns() + (WATCHDOG_MS / 2 + i * WATCHDOG_MS / EV_FENCES) * MS_NS;
		ev_fd[i] = raw_export(ctx, ev_id, raw_age(ctx, ev_id), (uint64_t)ev_deadline[i]);
	}

	until = now_ns() + WATCHDOG_MS * MS_NS + LATE_LIMIT_NS;
	for (i = 0; i < N_TIMELINES; i++)
		for (k = 0; k < TL_FENCES; k++) {
			if (tl_fd[i][k] < 0) {
				s->fences++;
				continue;
			}
			raw_wait(tl_fd[i][k], (int)((until - now_ns()) / MS_NS) > 0 ?
				 (int)((until - now_ns()) / MS_NS) : 0);
			/* The timeline's watchdog starts at creation, a little later. */
			account(s, tl_fd[i][k], tl_deadline);
		}
	for (i = 0; i < EV_FENCES; i++) {
		if (ev_fd[i] < 0) {
			s->fences++;
			continue;
		}
		raw_wait(ev_fd[i], (int)((until - now_ns()) / MS_NS) > 0 ?
			 (int)((until - now_ns()) / MS_NS) : 0);
		account(s, ev_fd[i], ev_deadline[i]);
		close(ev_fd[i]);
	}
	/* The imports' error value lands from the worker, after the fence. */
	for (k = 0; k < 2000; k++) {
		unsigned long w = 0;

		for (i = 0; i < N_IMPORTS; i++)
			w += __atomic_load_n(&words[i], __ATOMIC_ACQUIRE) == ERROR_VALUE;
		if (w >= made || now_ns() > until)
			break;
		usleep(1000);
	}
	s->imports += made;
	for (i = 0; i < N_IMPORTS; i++)
		s->written += words[i] == ERROR_VALUE;
	for (i = 0; i < N_TIMELINES; i++) {
		for (k = 0; k < TL_FENCES; k++)
			if (tl_fd[i][k] >= 0)
				close(tl_fd[i][k]);
		if (tl[i] >= 0)
			close(tl[i]);
	}
}

static void test_pressure(void)
{
	long stall0 = vmstat_value("allocstall_normal") + vmstat_value("allocstall_movable"),
	     scan0 = vmstat_value("pgscan_direct") + vmstat_value("pgscan_kswapd"), stalls, scans;
	char saved[32] = "10000";
	struct round_stats s = { 0 };
	uint64_t *words;
	unsigned int rounds = 0, restarts = 0;
	long avail_min = LONG_MAX, avail;
	int ctx, status;
	int64_t end;
	HsaEvent *ev;
	pid_t hog;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD failed");
	ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	kfdsync_param_read("watchdog_ms", saved, sizeof(saved));
	kfdsync_param_write("watchdog_ms", "300");
	ctx = raw_open(RAW_KFDSYNC_DEV);
	words = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ev || ctx < 0 || words == MAP_FAILED || raw_register(ctx, ev->EventId, slot_addr(ev)))
		tap_bail("set-up failed");
	/* The program itself is the last the OOM killer would take. */
	write_text("/proc/self/oom_score_adj", "-1000");

	hog = hog_start();
	end = now_ns() + (int64_t)(opts.seconds * S_NS);
	while (now_ns() < end) {
		if (waitpid(hog, &status, WNOHANG) == hog) {
			restarts++;
			hog = hog_start();
		}
		round_run(ctx, ev->EventId, words, &s);
		rounds++;
		avail = meminfo_kb("MemAvailable");
		if (avail >= 0 && avail < avail_min)
			avail_min = avail;
	}
	kill(hog, SIGKILL);
	reap(hog);
	kfdsync_param_write("watchdog_ms", saved);

	stalls = vmstat_value("allocstall_normal") + vmstat_value("allocstall_movable") - stall0;
	scans = vmstat_value("pgscan_direct") + vmstat_value("pgscan_kswapd") - scan0;
	tap_diag("%u rounds under pressure (hog restarted %u times): MemAvailable down to %ld kB, "
		 "%ld direct reclaim stalls, %ld pages scanned", rounds, restarts, avail_min, stalls,
		 scans);
	tap_diag("%lu fences, %lu ended -ETIMEDOUT, worst %.1f ms after the deadline; %lu imports, "
		 "%lu wrote the error value", s.fences, s.timed_out, s.worst_late_ns / 1e6, s.imports,
		 s.written);
	/*
	 * Reclaim ran: pages scanned, or an allocation stalled in direct
	 * reclaim (the debug kernel's guest once stalled with none scanned).
	 */
	tap_ok(rounds > 0 && (scans > 0 || stalls > 0),
	       "memory_under_reclaim (%ld pages scanned, %ld stalls)", scans, stalls);
	tap_ok(s.fences > 0 && s.timed_out == s.fences, "every_fence_timed_out (%lu of %lu)",
	       s.timed_out, s.fences);
	tap_ok(!s.late, "every_fence_ended_within_bound (%lu later than %lld s)", s.late,
	       (long long)(LATE_LIMIT_NS / S_NS));
	tap_ok(s.imports == (unsigned long)rounds * N_IMPORTS && s.written == s.imports,
	       "every_import_wrote_its_error_value (%lu of %lu)", s.written, s.imports);

	raw_unregister(ctx, ev->EventId);
	close(ctx);
	munmap(words, 4096);
	hsaKmtDestroyEvent(ev);
	hsaKmtCloseKFD();
}

int main(int argc, char **argv)
{
	int n;

	scrub_hsa_env();
	stress_parse(argc, argv, "stress_reclaim", 40, 0, &opts);
	require_sim_guest();
	stress_require_root();
	stress_check_zero("counters_zero_before", 0, 0, 2000);
	n = count_rescuers();
	tap_ok(n >= 3, "workqueues_have_rescuers (%d rescuer threads)", n);
	test_pressure();
	stress_check_zero("counters_zero_after", 0, 0, 15000);
	printf("1..%u\n", tap_count);
	return tap_exit();
}
