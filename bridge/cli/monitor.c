// SPDX-License-Identifier: MIT
/*
 * kfdsync monitor: follow kfdsync.ko's tracepoints live, one line per step.
 *
 * How this works: the command makes a tracefs instance of its own
 * (instances/kfdsync-monitor-PID, so that it neither needs nor disturbs the
 * global trace buffer), enables the "kfdsync" events there (and with
 * --dma-fence the "dma_fence" ones), reads the instance's trace_pipe and
 * prints each event as one step of the fence (or event, timeline, slot) it
 * belongs to. On exit (Ctrl-C, --count, --duration) it disables the events
 * and removes the instance. --input reads a saved trace instead: tracefs's
 * "trace" file or 'trace-cmd report' output.
 *
 * What the module's events mean is in kmod/kfdsync_trace.h: every event
 * that concerns a fence carries its dma_fence context and seqno; a fence
 * that ends with an error does so in the task that first emitted the cause
 * (kfdsync_end, or kfdsync_watchdog), which is how the cause is named here.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"

static void usage_monitor(FILE *f)
{
	fprintf(f, "usage: %s monitor [--json] [--pid PID] [--event ID] [--fence CONTEXT[:SEQNO]]\n"
		"                       [--dma-fence] [--count N] [--duration MS]\n"
		"                       [--input FILE | --tracefs DIR]\n"
		"Follow kfdsync.ko's tracepoints live (tracefs, as root): one line per\n"
		"step of each fence's life - export, slot count, signal, end and why,\n"
		"imports, timelines. --input reads a saved trace instead.\n", prog);
}

/* ---- one trace line ---- */

#define MAX_FIELDS 16

struct rec {
	double ts;
	int pid;			/* the task's, as the trace shows it */
	char comm[32];
	char event[48];
	int n;
	char *key[MAX_FIELDS];
	char *val[MAX_FIELDS];
	char buf[1024];
};

static const char *get(const struct rec *r, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key))
			return r->val[i];
	return NULL;
}

/* A numeric field (decimal, or 0x hex); @def when absent or not a number. */
static int64_t num(const struct rec *r, const char *key, int64_t def)
{
	const char *v = get(r, key);
	char *end;
	long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoll(v, &end, 0);
	if (*end || errno) {
		unsigned long long u = strtoull(v, &end, 0);

		if (*end)
			return def;
		return (int64_t)u;
	}
	return x;
}

static uint64_t unum(const struct rec *r, const char *key)
{
	const char *v = get(r, key);

	return v ? strtoull(v, NULL, 0) : 0;
}

/*
 * Parse one line of a trace ("comm-PID [CPU] [flags] TIMESTAMP: EVENT:
 * key=value ..."), as tracefs and 'trace-cmd report' print it. Only
 * kfdsync_* and dma_fence_* events are kept: true for those.
 */
static bool parse_line(const char *line, struct rec *r)
{
	const char *p, *q, *open = NULL, *name, *colon;
	char *end, *tok, *save;
	size_t len;

	memset(r, 0, sizeof(*r));
	if (*line == '#')
		return false;
	/* The CPU: the first "[digits]". */
	for (p = strchr(line, '['); p; p = strchr(p + 1, '[')) {
		const char *d = p + 1;

		while (*d >= '0' && *d <= '9')
			d++;
		if (d > p + 1 && *d == ']') {
			open = p;
			break;
		}
	}
	if (!open)
		return false;
	/* comm-PID before it. */
	for (q = open; q > line && q[-1] == ' '; q--)
		;
	for (p = q; p > line && p[-1] >= '0' && p[-1] <= '9'; p--)
		;
	if (p == q || p == line || p[-1] != '-')
		return false;
	r->pid = atoi(p);
	{
		const char *c = line;
		size_t n;

		while (*c == ' ')
			c++;
		n = (size_t)(p - 1 - c);
		if (n >= sizeof(r->comm))
			n = sizeof(r->comm) - 1;
		memcpy(r->comm, c, n);
	}
	/* TIMESTAMP: the first word after the CPU that is a number and a colon. */
	p = strchr(open, ']') + 1;
	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p)
			return false;
		r->ts = strtod(p, &end);
		if (end != p && *end == ':')
			break;
		p = strchr(p, ' ');
		if (!p)
			return false;
	}
	name = end + 1;
	while (*name == ' ')
		name++;
	colon = strchr(name, ':');
	if (!colon || (size_t)(colon - name) >= sizeof(r->event))
		return false;
	memcpy(r->event, name, (size_t)(colon - name));
	if (strncmp(r->event, "kfdsync_", 8) && strncmp(r->event, "dma_fence_", 10))
		return false;
	len = strlen(colon + 1);
	if (len >= sizeof(r->buf))
		len = sizeof(r->buf) - 1;
	memcpy(r->buf, colon + 1, len);
	while (len && (r->buf[len - 1] == '\n' || r->buf[len - 1] == '\r'))
		r->buf[--len] = '\0';
	for (tok = strtok_r(r->buf, " ", &save); tok && r->n < MAX_FIELDS;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		r->key[r->n] = tok;
		r->val[r->n++] = eq + 1;
	}
	return true;
}

/* ---- what the monitor remembers ---- */

/* A fence context: whose it is. */
struct known_ctx {
	uint64_t context;
	int tgid;
	uint32_t id;			/* the KFD event, 0 for a timeline or import */
};

/* A fence: when it was made, for its life's length. */
struct known_fence {
	uint64_t context, seqno;
	double born;
};

/* A task's last cause of ends (kfdsync_end, kfdsync_watchdog). */
struct task_cause {
	int pid;
	char cause[16];
};

#define MAX_KNOWN 4096
#define MAX_TASKS 256

static struct known_ctx ctxs[MAX_KNOWN];
static unsigned int n_ctxs;
static struct known_fence fences[MAX_KNOWN];
static unsigned int n_fences, next_fence;
static struct task_cause causes[MAX_TASKS];
static unsigned int next_cause;

/* dma_fence's own events print contexts and seqnos as 32-bit numbers. */
static bool same_ctx(uint64_t a, uint64_t b, bool short_b)
{
	return short_b ? (uint32_t)a == (uint32_t)b : a == b;
}

static struct known_ctx *find_ctx(uint64_t context, bool short_ctx)
{
	for (unsigned int i = n_ctxs; i--;)
		if (same_ctx(ctxs[i].context, context, short_ctx))
			return &ctxs[i];
	return NULL;
}

static void learn_ctx(uint64_t context, int tgid, uint32_t id)
{
	struct known_ctx *k = find_ctx(context, false);

	if (!k) {
		/* Oldest first out when full. */
		if (n_ctxs == MAX_KNOWN)
			memmove(ctxs, ctxs + 1, sizeof(ctxs[0]) * --n_ctxs);
		k = &ctxs[n_ctxs++];
	}
	*k = (struct known_ctx){ context, tgid, id };
}

static struct known_fence *find_fence(uint64_t context, uint64_t seqno)
{
	for (unsigned int i = 0; i < n_fences; i++)
		if (fences[i].context == context && fences[i].seqno == seqno)
			return &fences[i];
	return NULL;
}

static void learn_fence(uint64_t context, uint64_t seqno, double born)
{
	struct known_fence *f = find_fence(context, seqno);

	if (!f) {
		f = &fences[next_fence];
		next_fence = (next_fence + 1) % MAX_KNOWN;
		if (n_fences < MAX_KNOWN)
			n_fences++;
	}
	*f = (struct known_fence){ context, seqno, born };
}

static struct task_cause *task(int pid)
{
	for (unsigned int i = 0; i < MAX_TASKS; i++)
		if (causes[i].pid == pid && causes[i].cause[0])
			return &causes[i];
	return NULL;
}

static void set_cause(int pid, const char *cause)
{
	struct task_cause *t = task(pid);

	if (!t) {
		t = &causes[next_cause];
		next_cause = (next_cause + 1) % MAX_TASKS;
	}
	t->pid = pid;
	snprintf(t->cause, sizeof(t->cause), "%s", cause);
}

static void clear_cause(int pid)
{
	struct task_cause *t = task(pid);

	if (t)
		t->cause[0] = '\0';
}

/* ---- filters ---- */

static bool want_dma_fence;
static int want_pid = -1;
static int64_t want_event = -1;
static bool want_fence;
static uint64_t want_context, want_seqno;
static bool want_seqno_set;

/* Whose is @r, and which event and fence: what the filters look at. */
struct owner {
	int tgid;			/* -1 unknown */
	int64_t id;			/* -1 unknown */
	bool has_ctx, has_seqno;
	uint64_t context, seqno;
};

static struct owner owner_of(const struct rec *r)
{
	bool dma = !strncmp(r->event, "dma_fence_", 10);
	struct owner o = { .tgid = (int)num(r, "tgid", -1), .id = num(r, "id", -1) };
	struct known_ctx *k;

	if (o.tgid == 0)
		o.tgid = -1;
	if (!strcmp(r->event, "kfdsync_end") && o.id == 0)
		o.id = -1;
	o.has_ctx = get(r, "context");
	o.context = unum(r, "context");
	o.has_seqno = get(r, "seqno");
	o.seqno = unum(r, "seqno");
	if (o.has_ctx && (k = find_ctx(o.context, dma))) {
		if (dma)
			o.context = k->context;
		if (o.tgid < 0)
			o.tgid = k->tgid;
		if (o.id < 0 && k->id)
			o.id = k->id;
	}
	return o;
}

static bool wanted(const struct rec *r, const struct owner *o)
{
	if (want_pid >= 0 && o->tgid != want_pid)
		return false;
	if (want_event >= 0 && o->id != want_event)
		return false;
	if (want_fence) {
		if (!o->has_ctx || o->context != want_context)
			return false;
		if (want_seqno_set && o->has_seqno && o->seqno != want_seqno)
			return false;
	}
	/* dma_fence's events: asked for, and of fences kfdsync made or imported. */
	if (!strncmp(r->event, "dma_fence_", 10) &&
	    (!want_dma_fence || !find_ctx(o->context, true)))
		return false;
	return true;
}

/* ---- output ---- */

static bool json;

static const char *errname(int64_t e)
{
	const char *s = e < 0 ? strerrorname_np((int)-e) : NULL;

	return s ? s : "error";
}

/* The status of a fence that ended: "signalled" or "-ETIMEDOUT". */
static void status_text(char *buf, size_t len, int64_t status)
{
	if (status == 1)
		snprintf(buf, len, "signalled");
	else if (status < 0)
		snprintf(buf, len, "-%s", errname(status));
	else
		snprintf(buf, len, "pending");
}

/* "key": value, a number where the trace printed one (decimal or 0x hex). */
static void json_field(const char *key, const char *val, bool first)
{
	unsigned long long u;
	long long x;
	char *end;

	printf("%s", first ? "" : ", ");
	json_string(stdout, key);
	errno = 0;
	if (*val == '-') {
		x = strtoll(val, &end, 10);
		if (end != val && !*end && !errno) {
			printf(": %lld", x);
			return;
		}
	} else if (*val >= '0' && *val <= '9') {
		u = strtoull(val, &end, 0);
		if (!*end && !errno) {
			printf(": %llu", u);
			return;
		}
	}
	printf(": ");
	json_string(stdout, val);
}

/* One step: human text, or one JSON object per line. */
static void emit(const struct rec *r, const struct owner *o, const char *subject,
		 const char *step, const char *details, const char *cause, double life_ms)
{
	if (!json) {
		printf("%13.6f  %-16s %-20s %s\n", r->ts, subject, step, details);
		return;
	}
	printf("{\"time\": %.6f, \"task\": %d, \"comm\": ", r->ts, r->pid);
	json_string(stdout, r->comm);
	printf(", \"event\": ");
	json_string(stdout, r->event);
	printf(", \"step\": ");
	json_string(stdout, step);
	if (o->tgid >= 0)
		printf(", \"owner\": %d", o->tgid);
	if (o->has_ctx)
		printf(", \"fence_context\": %" PRIu64, o->context);
	if (cause)
		printf(", \"cause\": \"%s\"", cause);
	if (life_ms >= 0)
		printf(", \"life_ms\": %.3f", life_ms);
	printf(", \"fields\": {");
	for (int i = 0; i < r->n; i++)
		json_field(r->key[i], r->val[i], !i);
	printf("}}\n");
}

/* Learn from @r, and print it if the filters want it: true if printed. */
static bool show(const struct rec *r)
{
	char subject[48], details[256], st[32];
	const char *ev = r->event + (strncmp(r->event, "kfdsync_", 8) ? 0 : 8);
	const char *step = ev, *cause = NULL;
	uint64_t context = unum(r, "context"), seqno = unum(r, "seqno");
	int tgid = (int)num(r, "tgid", 0);
	double life = -1;
	struct owner o;

	details[0] = '\0';
	snprintf(subject, sizeof(subject), "fence %" PRIu64 ":%" PRIu64, context, seqno);

	/* Learn first: the line itself may be what makes its fence known. */
	/* An event's context at its registration (or first export seen). */
	if (!strcmp(ev, "register") || (!strcmp(ev, "export") && !find_ctx(context, false)))
		learn_ctx(context, tgid, (uint32_t)num(r, "id", 0));
	else if (!strcmp(ev, "timeline_create") ||
		 (!strcmp(ev, "import_arm") && !find_ctx(context, false)))
		learn_ctx(context, tgid, 0);
	if (!strcmp(ev, "export") || !strcmp(ev, "import_arm"))
		learn_fence(context, seqno, r->ts);
	o = owner_of(r);

	/* Causes of ends, per task. */
	if (!strcmp(ev, "end"))
		set_cause(r->pid, get(r, "cause") ?: "?");
	else if (!strcmp(ev, "watchdog"))
		set_cause(r->pid, "watchdog");
	else if (strcmp(ev, "fence_end") && strcmp(ev, "unregister") &&
		 strcmp(ev, "import_write") && strncmp(r->event, "dma_fence_", 10))
		clear_cause(r->pid);

	if (!strcmp(ev, "register")) {
		snprintf(subject, sizeof(subject), "event %" PRIu64, context);
		snprintf(details, sizeof(details), "pid %d event %s, counted by %s", tgid,
			 get(r, "id") ?: "?", get(r, "source") ?: "?");
	} else if (!strcmp(ev, "unregister")) {
		snprintf(subject, sizeof(subject), "event %" PRIu64, context);
		snprintf(details, sizeof(details), "pid %d event %s at age %s", tgid,
			 get(r, "id") ?: "?", get(r, "age") ?: "?");
	} else if (!strcmp(ev, "export")) {
		int64_t s = num(r, "status", 0);

		status_text(st, sizeof(st), s);
		snprintf(details, sizeof(details), "pid %d event %s as %s, after age %s: %s%s",
			 tgid, get(r, "id") ?: "?", get(r, "kind") ?: "?", get(r, "age") ?: "?",
			 s ? "born " : "", st);
	} else if (!strcmp(ev, "slot_signal")) {
		const char *from = get(r, "from") ?: "?";

		snprintf(subject, sizeof(subject), "slot %s", get(r, "id") ?: "?");
		step = "count";
		if (!strcmp(from, "cpu"))
			snprintf(details, sizeof(details), "CPU set counted (signal %s)",
				 get(r, "signals") ?: "?");
		else
			snprintf(details, sizeof(details), "%s write %s counted (signal %s)",
				 !strcmp(from, "scan") ? "pending" : "GPU", get(r, "value") ?: "?",
				 get(r, "signals") ?: "?");
	} else if (!strcmp(ev, "signal")) {
		snprintf(subject, sizeof(subject), "event %" PRIu64, context);
		snprintf(details, sizeof(details), "pid %d event %s +%s (%s): age %s", tgid,
			 get(r, "id") ?: "?", get(r, "count") ?: "?", get(r, "source") ?: "?",
			 get(r, "age") ?: "?");
	} else if (!strcmp(ev, "fence_end")) {
		int64_t s = num(r, "status", 0);
		bool dropped = num(r, "dropped", 0) != 0;
		struct known_fence *f = find_fence(context, seqno);
		struct task_cause *t = task(r->pid);
		const char *why = s == 1 ? "signalled" : t ? t->cause : "unknown";

		if (f)
			life = (r->ts - f->born) * 1e3;
		status_text(st, sizeof(st), s);
		if (dropped) {
			/* Its last reference was going: nobody saw it end. */
			cause = "dropped";
			step = "dropped";
			snprintf(details, sizeof(details),
				 "unsignalled, no reference left (was to be %s, %s)", st, why);
		} else {
			cause = why;
			step = s == 1 ? "signalled" : "ended";
			if (s == 1)
				snprintf(details, sizeof(details), "%s", "");
			else
				snprintf(details, sizeof(details), "%s (%s)", st, why);
		}
		if (life >= 0) {
			size_t n = strlen(details);

			snprintf(details + n, sizeof(details) - n, "%safter %.3f ms",
				 n ? " " : "", life);
		}
	} else if (!strcmp(ev, "end")) {
		const char *id = get(r, "id");

		if (tgid > 0)
			snprintf(subject, sizeof(subject), "pid %d", tgid);
		else if (id && strcmp(id, "0"))
			snprintf(subject, sizeof(subject), "event id %s", id);
		else
			snprintf(subject, sizeof(subject), "all");
		status_text(st, sizeof(st), num(r, "error", 0));
		snprintf(details, sizeof(details), "%s: pending fences end with %s",
			 get(r, "cause") ?: "?", st);
	} else if (!strcmp(ev, "watchdog")) {
		snprintf(details, sizeof(details), "expired, %.3f ms late: ends with -ETIMEDOUT",
			 (double)num(r, "late_ns", 0) / 1e6);
	} else if (!strcmp(ev, "import_arm")) {
		step = "import";
		snprintf(details, sizeof(details),
			 "pid %d imports %s/%s: %s value %s (error %s) event %s fail_event %s",
			 tgid, get(r, "driver") ?: "?", get(r, "timeline") ?: "?",
			 get(r, "target") ?: "?", get(r, "value") ?: "?",
			 get(r, "error_value") ?: "?", get(r, "event") ?: "?",
			 get(r, "fail_event") ?: "?");
	} else if (!strcmp(ev, "import_write")) {
		step = "write";
		snprintf(details, sizeof(details), "value %s written", get(r, "value") ?: "?");
	} else if (!strcmp(ev, "import_done")) {
		status_text(st, sizeof(st), num(r, "status", 0));
		step = "import done";
		snprintf(details, sizeof(details), "fence %s: %s done", st, get(r, "target") ?: "?");
	} else if (!strcmp(ev, "import_cancel")) {
		step = "import cancelled";
		snprintf(details, sizeof(details), "the importer closed its context");
	} else if (!strcmp(ev, "timeline_create")) {
		snprintf(subject, sizeof(subject), "timeline %" PRIu64, context);
		step = "create";
		snprintf(details, sizeof(details), "pid %d", tgid);
	} else if (!strcmp(ev, "timeline_inc")) {
		snprintf(subject, sizeof(subject), "timeline %" PRIu64, context);
		step = "inc";
		snprintf(details, sizeof(details), "+%s: value %s", get(r, "inc") ?: "?",
			 get(r, "value") ?: "?");
	} else if (!strncmp(r->event, "dma_fence_", 10)) {
		/* The core's numbers are 32-bit: name the fence by ours. */
		snprintf(subject, sizeof(subject), "fence %" PRIu64 ":%" PRIu64, o.context, seqno);
		snprintf(details, sizeof(details), "%s %s", get(r, "driver") ?: "?",
			 get(r, "timeline") ?: "?");
	} else {
		snprintf(details, sizeof(details), "(not known to this kfdsync monitor)");
	}
	if (!wanted(r, &o))
		return false;
	emit(r, &o, subject, step, details, cause, life);
	return true;
}

/* ---- tracefs ---- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

/*
 * The tracefs mount: @dir if given, else /sys/kernel/tracing, else the one
 * debugfs mounts on /sys/kernel/debug/tracing. 0, or 1 with a message.
 */
static int find_tracefs(const char *dir, char *out, size_t len)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	int err = ENOENT, denied = 0;
	char path[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < (dir ? 1 : 2); i++) {
		const char *d = dir ? dir : dirs[i];

		snprintf(path, sizeof(path), "%s/trace", d);
		if (!stat(path, &st) && !access(path, R_OK | W_OK)) {
			snprintf(out, len, "%s", d);
			return 0;
		}
		if (errno == EACCES || errno == EPERM || !stat(path, &st)) {
			denied = 1;
			err = EACCES;
		} else if (!denied) {
			err = errno;
		}
	}
	if (err == EACCES)
		fail("no access to tracefs (%s): kfdsync monitor needs root, or read and "
		     "write access to tracefs (see kfdsync-monitor(1))", dir ? dir : dirs[0]);
	else
		fail("tracefs is not mounted (no %s/trace): as root, 'mount -t tracefs nodev "
		     "/sys/kernel/tracing', or use --input with a saved trace",
		     dir ? dir : dirs[0]);
	return 1;
}

static int follow(FILE *in, long count)
{
	char line[2048];
	struct rec r;
	long shown = 0;

	while (!stop && fgets(line, sizeof(line), in)) {
		if (!parse_line(line, &r) || !show(&r))
			continue;
		if (count > 0 && ++shown >= count)
			break;
	}
	return 0;
}

static int monitor_live(const char *tracefs, long count, long duration_ms)
{
	char root[PATH_MAX - 128], inst[PATH_MAX], path[PATH_MAX + 64];
	struct sigaction sa = { .sa_handler = on_signal };
	int ret = 1, err, fd;
	FILE *in;

	if (find_tracefs(tracefs, root, sizeof(root)))
		return 1;
	snprintf(path, sizeof(path), "%s/events/kfdsync", root);
	if (access(path, F_OK)) {
		fail("no kfdsync events in %s/events: kfdsync.ko is not loaded, or is older than "
		     "its tracepoints", root);
		return 1;
	}
	snprintf(inst, sizeof(inst), "%s/instances/kfdsync-monitor-%d", root, (int)getpid());
	if (mkdir(inst, 0700)) {
		err = errno;
		if (err == EACCES || err == EPERM)
			fail("cannot make a tracefs instance (%s): %s; kfdsync monitor needs root, "
			     "or write access to %s/instances", inst, strerror(err), root);
		else
			fail("cannot make a tracefs instance (%s): %s", inst, strerror(err));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/events/kfdsync/enable", inst);
	err = write_str(path, "1");
	if (!err && want_dma_fence) {
		snprintf(path, sizeof(path), "%s/events/dma_fence/enable", inst);
		err = write_str(path, "1");
	}
	if (err) {
		fail("cannot enable the events (%s): %s", path, strerror(-err));
		goto out_rmdir;
	}
	snprintf(path, sizeof(path), "%s/trace_pipe", inst);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(in = fdopen(fd, "r"))) {
		fail("cannot open %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out_disable;
	}
	/* No SA_RESTART: a signal ends the blocked read. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (duration_ms > 0) {
		struct itimerval it = { .it_value = { duration_ms / 1000,
						      (duration_ms % 1000) * 1000 } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	fprintf(stderr, "%s: following %s (Ctrl-C to stop)\n", prog, inst);
	ret = follow(in, count);
	fclose(in);
out_disable:
	snprintf(path, sizeof(path), "%s/events/enable", inst);
	write_str(path, "0");
out_rmdir:
	if (rmdir(inst))
		fail("cannot remove the tracefs instance %s: %s", inst, strerror(errno));
	return ret;
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 'p' },
		{ "event", required_argument, NULL, 'e' },
		{ "fence", required_argument, NULL, 'f' },
		{ "dma-fence", no_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 't' },
		{ "input", required_argument, NULL, 'i' },
		{ "tracefs", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *input = NULL, *tracefs = NULL;
	unsigned long v, duration = 0, count = 0;
	char *colon;
	int c, ret;

	while ((c = getopt_long(argc, argv, "jp:e:f:dn:t:i:T:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			if (parse_uint("--pid", optarg, INT_MAX, &v))
				return EXIT_USAGE;
			want_pid = (int)v;
			break;
		case 'e':
			if (parse_uint("--event", optarg, UINT32_MAX, &v))
				return EXIT_USAGE;
			want_event = (int64_t)v;
			break;
		case 'f':
			colon = strchr(optarg, ':');
			if (colon)
				*colon = '\0';
			if (parse_uint("--fence", optarg, ULONG_MAX, &v))
				return EXIT_USAGE;
			want_fence = true;
			want_context = v;
			if (colon) {
				if (parse_uint("--fence", colon + 1, ULONG_MAX, &v))
					return EXIT_USAGE;
				want_seqno = v;
				want_seqno_set = true;
			}
			break;
		case 'd':
			want_dma_fence = true;
			break;
		case 'n':
			if (parse_uint("--count", optarg, LONG_MAX, &count))
				return EXIT_USAGE;
			break;
		case 't':
			if (parse_uint("--duration", optarg, INT_MAX, &duration))
				return EXIT_USAGE;
			break;
		case 'i':
			input = optarg;
			break;
		case 'T':
			tracefs = optarg;
			break;
		case 'h':
			usage_monitor(stdout);
			return 0;
		default:
			usage_monitor(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage_monitor(stderr);
		return EXIT_USAGE;
	}
	if (input && tracefs) {
		fail("--input and --tracefs: a saved trace or a live one, not both");
		return EXIT_USAGE;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!input)
		return monitor_live(tracefs, (long)count, (long)duration);

	FILE *in = strcmp(input, "-") ? fopen(input, "r") : stdin;

	if (!in) {
		fail("%s: %s", input, strerror(errno));
		return 1;
	}
	ret = follow(in, (long)count);
	if (in != stdin)
		fclose(in);
	return ret;
}
