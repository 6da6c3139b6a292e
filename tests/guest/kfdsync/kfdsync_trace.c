// SPDX-License-Identifier: MIT
/*
 * kfdsync_trace: kfdsync.ko's tracepoints tell each fence's whole life.
 *
 * How this program works: it makes a tracefs instance of its own with the
 * "kfdsync" and "dma_fence" events enabled, then drives one path per test
 * (register, export as sync_file / eventfd / condition, GPU and CPU
 * signals, a pending slot write found by a registration, born fences, the
 * watchdog, imports that write memory and pass errors on, cancelled
 * imports, a closed context, an exiting owner, and in hooks mode amdkfd
 * destroying an event, a hardware exception, a GPU reset and amdgpu going
 * away) and reads the instance's trace back. Each test states the events
 * the path must emit, with their fields (process, event id, dma_fence
 * context and seqno, status, cause), and checks that each appears exactly
 * once and in that order; the dma_fence core's own events of the same
 * fence (same context and seqno) are part of the order. A fence that ends
 * with an error must end in the task that traced its cause. Removing any
 * trace call from the module makes a test here fail, but one: the end of
 * every context's events when amdgpu really unloads
 * (kfdsync_ctxs_amdkfd_gone(); its slot layer twin is tested, injected).
 *
 * It runs twice in the guest suite: with the hooks, and in relay mode
 * (kfdsync_trace_relay: the module reloaded with hooks=0), where the
 * relay thread's reports are the signals. Where amdkfd refuses every
 * process (7.x without a GPU), only the tests that need no KFD event run
 * (CPU timelines, imports). Output is TAP.
 */

#include <stdarg.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <linux/kfdsync_timeline.h>

#include "sim_test.h"
#include "kfdsync_export.h"

#define TIMELINE_DEV	"/dev/kfdsync_timeline"
#define INJECT		"/sys/kernel/debug/kfdsync/inject"
#define MAX_RECS	4096
#define MAX_STEPS	16

/* ---- the trace: an instance of our own ---- */

static char inst[256];
static char record_cmd[160];	/* the global options/record-cmd, "" if untouched */

static int trace_write(const char *file, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", inst, file);
	return write_text(path, val);
}

/*
 * tracefs: /sys/kernel/tracing, mounted there if needed, else debugfs's.
 *
 * Recording the tasks' names (options/record-cmd, global, and copied into
 * an instance when it is made) hooks sched_switch while events are
 * enabled: the kernel patches __schedule's tracepoint, and under QEMU TCG
 * a CPU can keep running the int3 of that patch after it was undone and
 * hang the guest (seen on 6.1, within a hundred enables). It is off while
 * this program traces (and so for the monitor it runs); the names are not
 * needed, the pids are.
 */
static void trace_start(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];
	int ret;

	mount("nodev", dirs[0], "tracefs", 0, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(dirs) && !inst[0]; i++) {
		snprintf(path, sizeof(path), "%s/instances", dirs[i]);
		if (!access(path, W_OK)) {
			snprintf(inst, sizeof(inst), "%s/kfdsync_trace_%d", path, (int)getpid());
			snprintf(record_cmd, sizeof(record_cmd), "%s/options/record-cmd",
				 dirs[i]);
		}
	}
	if (!inst[0])
		tap_bail("no tracefs with instances in /sys/kernel/tracing or /sys/kernel/debug/tracing");
	if (write_text(record_cmd, "0"))
		record_cmd[0] = '\0';
	if (mkdir(inst, 0700))
		tap_bail("mkdir %s: %s", inst, strerror(errno));
	ret = trace_write("events/kfdsync/enable", "1");
	if (!ret)
		ret = trace_write("events/dma_fence/enable", "1");
	if (ret)
		tap_bail("cannot enable the events in %s: %s", inst, strerror(-ret));
}

static void trace_stop(void)
{
	if (!inst[0])
		return;
	trace_write("events/enable", "0");
	if (rmdir(inst))
		tap_diag("rmdir %s: %s", inst, strerror(errno));
	inst[0] = '\0';
	if (record_cmd[0])
		write_text(record_cmd, "1");
}

/* One event of the trace: its task, name and "key=value" fields. */
struct rec {
	int pid;
	char event[48];
	char fields[512];
};

static struct rec recs[MAX_RECS];
static int nrecs;

/* Start afresh: empty the buffer. */
static void trace_clear(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/trace", inst);
	if (write_text_flags(path, "", O_TRUNC))
		tap_bail("cannot clear %s", path);
	nrecs = 0;
}

/* Parse "comm-PID [CPU] flags TIME: event: fields" lines of the trace. */
static void trace_read(void)
{
	char path[512], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", inst);
	f = fopen(path, "r");
	if (!f)
		tap_bail("open %s: %s", path, strerror(errno));
	nrecs = 0;
	while (nrecs < MAX_RECS && fgets(line, sizeof(line), f)) {
		char *cpu = strstr(line, " ["), *p, *name, *colon;
		struct rec *r = &recs[nrecs];

		if (line[0] == '#' || !cpu)
			continue;
		/* "comm-PID" and spaces before the CPU. */
		for (p = cpu; p > line && p[-1] == ' '; p--)
			;
		while (p > line && p[-1] >= '0' && p[-1] <= '9')
			p--;
		r->pid = atoi(p);
		/* The timestamp ends with ": ", the event name with ":". */
		name = strstr(cpu, ": ");
		if (!name)
			continue;
		name += 2;
		colon = strchr(name, ':');
		if (!colon || colon - name >= (long)sizeof(r->event))
			continue;
		snprintf(r->event, sizeof(r->event), "%.*s", (int)(colon - name), name);
		snprintf(r->fields, sizeof(r->fields), "%s", colon + 2);
		r->fields[strcspn(r->fields, "\n")] = '\0';
		nrecs++;
	}
	fclose(f);
}

/* Field @key of @r into @buf; false if absent. */
static bool field(const struct rec *r, const char *key, char *buf, size_t len)
{
	size_t n = strlen(key);
	const char *p = r->fields;

	while ((p = strstr(p, key))) {
		if ((p == r->fields || p[-1] == ' ') && p[n] == '=') {
			p += n + 1;
			snprintf(buf, len, "%.*s", (int)strcspn(p, " "), p);
			return true;
		}
		p += n;
	}
	return false;
}

static uint64_t field_u64(const struct rec *r, const char *key)
{
	char v[64];

	return field(r, key, v, sizeof(v)) ? strtoull(v, NULL, 0) : UINT64_MAX;
}

/* Does @r have every "key=value" of @want (space-separated)? */
static bool matches(const struct rec *r, const char *event, const char *want)
{
	char w[256], *tok, *save, v[128];

	if (strcmp(r->event, event))
		return false;
	snprintf(w, sizeof(w), "%s", want);
	for (tok = strtok_r(w, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return false;
		*eq = '\0';
		if (!field(r, tok, v, sizeof(v)) || strcmp(v, eq + 1))
			return false;
	}
	return true;
}

/* The index of the only record matching, or -1 (none) / -2 (several). */
static int find_one(const char *event, const char *want)
{
	int found = -1;

	for (int i = 0; i < nrecs; i++) {
		if (!matches(&recs[i], event, want))
			continue;
		if (found >= 0)
			return -2;
		found = i;
	}
	return found;
}

/* Wait until @event with @want is in the trace (a worker's step). */
static bool trace_wait_for(const char *event, const char *want)
{
	int64_t end = kfdsim_now_ns() + (int64_t)WAIT_MS * 1000000;

	for (;;) {
		trace_read();
		if (find_one(event, want) != -1)
			return true;
		if (kfdsim_now_ns() > end)
			return false;
		usleep(2000);
	}
}

/* ---- plans: the events a path must emit, in order, once each ---- */

struct step {
	const char *event;
	char want[256];
	bool same_task_as_prev;	/* in the task of the previous step */
};

struct plan {
	struct step s[MAX_STEPS];
	int n;
};

static void step(struct plan *p, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void step(struct plan *p, const char *event, const char *fmt, ...)
{
	va_list ap;

	if (p->n == MAX_STEPS)
		tap_bail("too many steps");
	p->s[p->n].event = event;
	p->s[p->n].same_task_as_prev = false;
	va_start(ap, fmt);
	vsnprintf(p->s[p->n].want, sizeof(p->s[p->n].want), fmt, ap);
	va_end(ap);
	p->n++;
}

/* The step just added must be in the task of the one before it. */
static void same_task(struct plan *p)
{
	p->s[p->n - 1].same_task_as_prev = true;
}

static void diag_trace(void)
{
	for (int i = 0; i < nrecs; i++)
		tap_diag("  trace: %-6d %s: %s", recs[i].pid, recs[i].event, recs[i].fields);
}

/* Each step once, in order (read the trace first). */
static bool plan_holds(const struct plan *p)
{
	int last = -1, idx;

	for (int i = 0; i < p->n; i++) {
		idx = find_one(p->s[i].event, p->s[i].want);
		if (idx < 0) {
			tap_diag("step %d: %s %s: %s", i + 1, p->s[i].event, p->s[i].want,
				 idx == -1 ? "missing" : "more than once");
			diag_trace();
			return false;
		}
		if (idx < last) {
			tap_diag("step %d: %s %s: before step %d", i + 1, p->s[i].event,
				 p->s[i].want, i);
			diag_trace();
			return false;
		}
		if (p->s[i].same_task_as_prev && recs[idx].pid != recs[last].pid) {
			tap_diag("step %d: %s %s: in task %d, step %d in task %d", i + 1,
				 p->s[i].event, p->s[i].want, recs[idx].pid, i, recs[last].pid);
			diag_trace();
			return false;
		}
		last = idx;
	}
	return true;
}

/* ---- helpers ---- */

static pid_t me;
static uint64_t ev1_context;
static char comm[32];
static const char *source_name;

/* The context of event @id of process @tgid, from its registration. */
static uint64_t registered_context(int tgid, uint32_t id)
{
	char want[64];
	int i;

	snprintf(want, sizeof(want), "tgid=%d id=%u", tgid, id);
	trace_read();
	i = find_one("kfdsync_register", want);
	if (i < 0) {
		tap_diag("no single kfdsync_register %s", want);
		diag_trace();
		return UINT64_MAX;
	}
	return field_u64(&recs[i], "context");
}

/* A new event of ours registered (its context in *@context): bails out if not. */
static HsaEvent *registered_event(uint64_t *context)
{
	HsaEvent *ev = new_event();
	int ret = __ev_register(kfdsync, ev->EventId, slot_addr(ev), NULL);

	if (ret)
		tap_bail("register %u: %s", ev->EventId, strerror(-ret));
	*context = registered_context(me, ev->EventId);
	return ev;
}

static void unregister(HsaEvent *ev)
{
	struct kfdsync_event_unregister u = { .event_id = ev->EventId };

	ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u);
}

/* The steps of an export, with dma_fence's init before it. */
static void plan_export(struct plan *p, uint32_t id, uint64_t context, uint64_t age,
			const char *kind, int status)
{
	step(p, "dma_fence_init", "driver=kfdsync context=%u seqno=%u", (uint32_t)context,
	     (uint32_t)(age + 1));
	step(p, "kfdsync_export", "tgid=%d id=%u context=%" PRIu64 " seqno=%" PRIu64
	     " kind=%s age=%" PRIu64 " status=%d", me, id, context, age + 1, kind, age, status);
}

/* The steps of one signal of ev1 that ends fence @seqno (the mode's way). */
static void plan_signal(struct plan *p, const char *from, uint64_t age, uint64_t seqno)
{
	if (!relay_mode)
		step(p, "kfdsync_slot_signal", "id=%u from=%s", ev1->EventId, from);
	step(p, "kfdsync_signal", "tgid=%d id=%u context=%" PRIu64 " source=%s count=1 age=%" PRIu64,
	     me, ev1->EventId, ev1_context, source_name, age + 1);
	if (!relay_mode)
		same_task(p);
	step(p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=%" PRIu64 " status=1",
	     ev1_context, seqno);
	same_task(p);
	step(p, "dma_fence_signaled", "context=%u seqno=%u", (uint32_t)ev1_context,
	     (uint32_t)seqno);
}

/* Where amdkfd refuses processes (7.x without a GPU): the reason, else NULL. */
static const char *no_kfd;

/* A test that needs amdkfd's events: true (and its skips) without them. */
static bool skip_without_kfd(const char *name)
{
	if (no_kfd)
		tap_skip(no_kfd, "%s", name);
	return no_kfd;
}

static void setup_common(void)
{
	FILE *f;

	me = getpid();
	f = fopen("/proc/self/comm", "r");
	if (!f || !fgets(comm, sizeof(comm), f))
		tap_bail("cannot read /proc/self/comm");
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	trace_start();
	/* tap_bail() exits: the instance goes with it. */
	atexit(trace_stop);
	trace_clear();
}

/* Without amdkfd: a context for the CPU timelines' tests. */
static void setup_no_kfd(void)
{
	setup_common();
	kfdsync = open_kfdsync_mode(&relay_mode);
}

static void teardown_no_kfd(void)
{
	close(kfdsync);
}

static void setup(void)
{
	setup_common();
	export_setup();
	source_name = relay_mode ? "relay" : "hooks";
	ev1_context = registered_context(me, ev1->EventId);
	if (ev1_context == UINT64_MAX)
		tap_bail("no kfdsync_register for ev1");
}

/* ---- the tests ---- */

TEST(register_unregister)
{
	struct plan p = { 0 };
	uint64_t context;
	HsaEvent *ev;

	if (skip_without_kfd("trace_register_unregister"))
		return;
	trace_clear();
	ev = registered_event(&context);
	unregister(ev);
	step(&p, "kfdsync_register", "tgid=%d id=%u context=%" PRIu64 " source=%s", me,
	     ev->EventId, context, source_name);
	step(&p, "kfdsync_end", "cause=unregister error=-125 tgid=%d id=%u", me, ev->EventId);
	step(&p, "kfdsync_unregister", "tgid=%d id=%u context=%" PRIu64 " age=0", me,
	     ev->EventId, context);
	same_task(&p);
	trace_read();
	tap_ok(plan_holds(&p) && context != ev1_context, "trace_register_unregister");
	hsaKmtDestroyEvent(ev);
}

static void gpu_signal(void)
{
	submit_signal(queue, ev1, 0);
}

static void cpu_set(void)
{
	hsaKmtSetEvent(ev1);
}

/* ev1's next signal exported as a sync_file, then given by @signal. */
static void export_signal(const char *name, const char *from, void (*signal)(void))
{
	struct plan p = { 0 };
	uint64_t age;
	int fence;

	age = ev_age(kfdsync, ev1->EventId);
	trace_clear();
	fence = export(kfdsync, ev1->EventId, age);
	signal();
	if (!readable(fence, WAIT_MS))
		tap_diag("the fence did not signal");
	wait_age(kfdsync, ev1->EventId, age + 1);
	plan_export(&p, ev1->EventId, ev1_context, age, "sync_file", 0);
	plan_signal(&p, from, age, age + 1);
	trace_read();
	tap_ok(plan_holds(&p), "%s_%s", name, source_name);
	close(fence);
}

TEST(export_gpu_signal)
{
	if (skip_without_kfd("trace_export_gpu_signal"))
		return;
	export_signal("trace_export_gpu_signal", "gpu", gpu_signal);
	/* The slot's value is what RELEASE_MEM wrote (pm4_release_mem_event: 1). */
	if (!relay_mode)
		tap_ok(find_one("kfdsync_slot_signal", "from=gpu value=0x1") >= 0,
		       "trace_slot_signal_value");
}

TEST(export_cpu_set)
{
	if (skip_without_kfd("trace_export_cpu_set"))
		return;
	export_signal("trace_export_cpu_set", "cpu", cpu_set);
}

TEST(export_eventfd)
{
	struct plan p = { 0 };
	uint64_t age;
	int efd, ret;

	if (skip_without_kfd("trace_export_eventfd"))
		return;
	age = ev_age(kfdsync, ev1->EventId);
	efd = eventfd(0, EFD_CLOEXEC);
	trace_clear();
	ret = __export_eventfd(kfdsync, ev1->EventId, age, efd);
	if (ret)
		tap_diag("EXPORT_EVENTFD: %s", strerror(-ret));
	hsaKmtSetEvent(ev1);
	readable(efd, WAIT_MS);
	wait_age(kfdsync, ev1->EventId, age + 1);
	plan_export(&p, ev1->EventId, ev1_context, age, "eventfd", 0);
	plan_signal(&p, "cpu", age, age + 1);
	trace_read();
	tap_ok(!ret && plan_holds(&p), "trace_export_eventfd");
	close(efd);
}

/* An HSA-style condition: its own context, seqno 1, checked at each signal. */
TEST(export_condition)
{
	uint64_t age, cond_ctx = 0;
	volatile uint64_t *value;
	struct kfdsync_export_condition c = {
		.condition = KFDSYNC_CONDITION_EQ, .compare_value = 5,
	};
	struct plan p = { 0 };
	char want[128];
	int i, ok;

	if (skip_without_kfd("trace_export_condition"))
		return;
	age = ev_age(kfdsync, ev1->EventId);
	value = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (value == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	c.event_id = ev1->EventId;
	c.value_addr = (uintptr_t)value;
	trace_clear();
	ok = !ioctl(kfdsync, KFDSYNC_IOCTL_EXPORT_CONDITION, &c);
	*value = 5;
	hsaKmtSetEvent(ev1);
	if (ok && !readable(c.fd, WAIT_MS))
		tap_diag("the condition fence did not signal");
	wait_age(kfdsync, ev1->EventId, age + 1);
	trace_read();
	snprintf(want, sizeof(want), "tgid=%d id=%u kind=condition status=0", me, ev1->EventId);
	i = find_one("kfdsync_export", want);
	if (i >= 0)
		cond_ctx = field_u64(&recs[i], "context");
	step(&p, "kfdsync_export", "tgid=%d id=%u context=%" PRIu64 " seqno=1 kind=condition"
	     " age=0 status=0", me, ev1->EventId, cond_ctx);
	step(&p, "kfdsync_signal", "tgid=%d id=%u context=%" PRIu64 " source=%s age=%" PRIu64,
	     me, ev1->EventId, ev1_context, source_name, age + 1);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=1 status=1", cond_ctx);
	same_task(&p);
	tap_ok(ok && i >= 0 && cond_ctx != ev1_context && plan_holds(&p),
	       "trace_export_condition (context %" PRIu64 ")", cond_ctx);
	if (ok)
		close(c.fd);
	munmap((void *)value, 4096);
}

/* Signalled before the export: born signalled, no end of its own. */
TEST(export_born_signalled)
{
	uint64_t age;
	struct plan p = { 0 };
	char want[96];
	int fence;

	if (skip_without_kfd("trace_export_born_signalled"))
		return;
	age = ev_age(kfdsync, ev1->EventId);
	hsaKmtSetEvent(ev1);
	wait_age(kfdsync, ev1->EventId, age + 1);
	trace_clear();
	fence = export(kfdsync, ev1->EventId, age);
	plan_export(&p, ev1->EventId, ev1_context, age, "sync_file", 1);
	trace_read();
	snprintf(want, sizeof(want), "context=%" PRIu64 " seqno=%" PRIu64, ev1_context, age + 1);
	tap_ok(plan_holds(&p) && find_one("kfdsync_fence_end", want) == -1,
	       "trace_export_born_signalled");
	close(fence);
}

/* A pending slot write, counted when another context registers the event. */
TEST(slot_scan)
{
	uint64_t context, age;
	struct plan p = { 0 };
	uint32_t dw[16];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	HsaEvent *ev;
	int other;

	if (skip_without_kfd("trace_slot_scan"))
		return;
	if (relay_mode) {
		tap_skip("relay mode: no slot is read", "trace_slot_scan");
		return;
	}
	trace_clear();
	ev = registered_event(&context);
	/* The GPU writes the slot with no interrupt: nobody acknowledges it. */
	pm4_write_data64(&b, slot_addr(ev), 0x5a);
	if (kfdsim_queue_wait(sim, queue, submit(sim, queue, &b), WAIT_MS))
		tap_bail("queue did not complete");
	other = open_kfdsync();
	if (__ev_register(other, ev->EventId, slot_addr(ev), NULL))
		tap_diag("second registration failed");
	age = ev_age(kfdsync, ev->EventId);
	step(&p, "kfdsync_slot_signal", "id=%u from=scan value=0x5a", ev->EventId);
	step(&p, "kfdsync_signal", "tgid=%d id=%u context=%" PRIu64 " source=hooks count=1 age=1",
	     me, ev->EventId, context);
	same_task(&p);
	trace_read();
	tap_ok(age == 1 && plan_holds(&p), "trace_slot_scan (age %" PRIu64 ")", age);
	close(other);
	unregister(ev);
	hsaKmtDestroyEvent(ev);
}

/* The watchdog ends a fence: its step, then the fence's end, in its task. */
TEST(watchdog)
{
	uint64_t context;
	struct plan p = { 0 };
	HsaEvent *ev;
	int fence;

	if (skip_without_kfd("trace_watchdog"))
		return;
	trace_clear();
	ev = registered_event(&context);
	fence = __export(kfdsync, ev->EventId, 0, (uint64_t)kfdsim_now_ns() + 50000000);
	if (fence < 0 || !readable(fence, WAIT_MS))
		tap_diag("no watchdog end (%d)", fence);
	plan_export(&p, ev->EventId, context, 0, "sync_file", 0);
	step(&p, "kfdsync_watchdog", "context=%" PRIu64 " seqno=1", context);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=1 status=-110", context);
	same_task(&p);
	step(&p, "dma_fence_signaled", "context=%u seqno=1", (uint32_t)context);
	trace_read();
	tap_ok(fence >= 0 && fence_status(fence) == -ETIMEDOUT && plan_holds(&p),
	       "trace_watchdog");
	if (fence >= 0)
		close(fence);
	unregister(ev);
	hsaKmtDestroyEvent(ev);
}

/* ---- CPU timelines and imports ---- */

static int timeline_open(uint64_t *context);
static int timeline_fence(int tl, uint32_t value);

/* A CPU timeline's watchdog (50 ms for timelines opened meanwhile). */
TEST(timeline_watchdog)
{
	int old = param_read("watchdog_ms"), tl, fence;
	struct plan p = { 0 };
	uint64_t tl_ctx;

	if (old < 0 || !param_write("watchdog_ms", 50))
		tap_bail("cannot set watchdog_ms");
	trace_clear();
	tl = timeline_open(&tl_ctx);
	param_write("watchdog_ms", old);
	fence = timeline_fence(tl, 2);
	if (!readable(fence, WAIT_MS))
		tap_diag("the timeline's fence did not end");
	step(&p, "kfdsync_timeline_create", "tgid=%d context=%" PRIu64, me, tl_ctx);
	step(&p, "dma_fence_init", "driver=kfdsync context=%u seqno=2", (uint32_t)tl_ctx);
	step(&p, "kfdsync_watchdog", "context=%" PRIu64 " seqno=2", tl_ctx);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=2 status=-110", tl_ctx);
	same_task(&p);
	trace_read();
	tap_ok(fence_status(fence) == -ETIMEDOUT && plan_holds(&p), "trace_timeline_watchdog");
	close(fence);
	close(tl);
}

/* A timeline of ours, its context in *@context. */
static int timeline_open(uint64_t *context)
{
	char want[64];
	int tl = open(TIMELINE_DEV, O_RDWR | O_CLOEXEC), i;

	if (tl < 0)
		tap_bail("open %s: %s", TIMELINE_DEV, strerror(errno));
	snprintf(want, sizeof(want), "tgid=%d", me);
	trace_read();
	i = find_one("kfdsync_timeline_create", want);
	*context = i >= 0 ? field_u64(&recs[i], "context") : UINT64_MAX;
	return tl;
}

static int timeline_fence(int tl, uint32_t value)
{
	struct kfdsync_tl_create_fence a = { .value = value };

	if (ioctl(tl, KFDSYNC_TL_IOC_CREATE_FENCE, &a))
		tap_bail("CREATE_FENCE: %s", strerror(errno));
	return a.fence;
}

static int import(int ctx, const struct kfdsync_import *a)
{
	return ioctl(ctx, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, a) ? -errno : 0;
}

/* The import's driver and timeline names, as struct sync_fence_info cuts them. */
static void plan_arm(struct plan *p, uint64_t context, uint32_t seqno, const char *rest)
{
	char name[80];

	snprintf(name, sizeof(name), "kfdsync-timeline:%d:%s", me, comm);
	name[31] = '\0';
	step(p, "kfdsync_import_arm", "tgid=%d context=%" PRIu64 " seqno=%u driver=kfdsync"
	     " timeline=%s %s", me, context, seqno, name, rest);
}

TEST(import_memory)
{
	volatile uint64_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t tl_ctx;
	struct plan p = { 0 };
	uint32_t inc = 1;
	int tl, fence, ret;

	if (word == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	trace_clear();
	tl = timeline_open(&tl_ctx);
	fence = timeline_fence(tl, 1);
	ret = import(kfdsync, &(struct kfdsync_import){ .fd = fence,
		.flags = KFDSYNC_IMPORT_MEMORY, .addr = (uintptr_t)word, .value = 7,
		.error_value = 99 });
	ioctl(tl, KFDSYNC_TL_IOC_INC, &inc);
	step(&p, "kfdsync_timeline_create", "tgid=%d context=%" PRIu64, me, tl_ctx);
	plan_arm(&p, tl_ctx, 1, "target=memory value=7 error_value=99");
	step(&p, "kfdsync_timeline_inc", "context=%" PRIu64 " inc=1 value=1", tl_ctx);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=1 status=1", tl_ctx);
	same_task(&p);
	step(&p, "kfdsync_import_write", "context=%" PRIu64 " seqno=1 value=7", tl_ctx);
	same_task(&p);
	step(&p, "kfdsync_import_done", "context=%" PRIu64 " seqno=1 status=1 target=memory",
	     tl_ctx);
	tap_ok(!ret && trace_wait_for("kfdsync_import_done", "seqno=1") && *word == 7 &&
	       plan_holds(&p), "trace_import_memory (word %" PRIu64 ")", *word);
	close(fence);
	close(tl);
	munmap((void *)word, 4096);
}

/*
 * An import passes its fence's error on (FAIL_EVENT) and writes the error
 * value: the timeline's close ends it (-ENOENT), the worker fails the event.
 */
TEST(import_error)
{
	volatile uint64_t *word;
	uint64_t tl_ctx, context;
	struct plan p = { 0 };
	int tl, fence, pending, ret;
	char rest[128];
	HsaEvent *ev;

	if (skip_without_kfd("trace_import_error"))
		return;
	word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (word == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	trace_clear();
	ev = registered_event(&context);
	pending = export(kfdsync, ev->EventId, 0);
	tl = timeline_open(&tl_ctx);
	fence = timeline_fence(tl, 1);
	ret = import(kfdsync, &(struct kfdsync_import){ .fd = fence,
		.flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_FAIL_EVENT,
		.addr = (uintptr_t)word, .value = 7, .error_value = 99,
		.fail_event_id = ev->EventId });
	close(fence);
	close(tl);
	snprintf(rest, sizeof(rest), "target=memory|fail_event value=7 error_value=99"
		 " fail_event=%u", ev->EventId);
	plan_arm(&p, tl_ctx, 1, rest);
	step(&p, "kfdsync_end", "cause=close error=-2 tgid=%d", me);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=1 status=-2", tl_ctx);
	same_task(&p);
	step(&p, "kfdsync_end", "cause=import error=-2 tgid=%d id=%u", me, ev->EventId);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=1 status=-2", context);
	same_task(&p);
	step(&p, "kfdsync_import_write", "context=%" PRIu64 " seqno=1 value=99", tl_ctx);
	same_task(&p);
	step(&p, "kfdsync_import_done", "context=%" PRIu64 " seqno=1 status=-2", tl_ctx);
	same_task(&p);
	tap_ok(!ret && trace_wait_for("kfdsync_import_done", "seqno=1") && *word == 99 &&
	       fence_status(pending) == -ENOENT && plan_holds(&p), "trace_import_error");
	close(pending);
	unregister(ev);
	hsaKmtDestroyEvent(ev);
	munmap((void *)word, 4096);
}

/* An import whose context closes before its fence ends is cancelled. */
TEST(import_cancel)
{
	volatile uint64_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t tl_ctx;
	struct plan p = { 0 };
	int tl, fence, other, ret;

	if (word == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	trace_clear();
	tl = timeline_open(&tl_ctx);
	fence = timeline_fence(tl, 1);
	other = open_kfdsync();
	ret = import(other, &(struct kfdsync_import){ .fd = fence,
		.flags = KFDSYNC_IMPORT_MEMORY, .addr = (uintptr_t)word, .value = 7 });
	close(other);
	plan_arm(&p, tl_ctx, 1, "target=memory value=7");
	step(&p, "kfdsync_import_cancel", "context=%" PRIu64 " seqno=1", tl_ctx);
	trace_read();
	tap_ok(!ret && plan_holds(&p) && find_one("kfdsync_import_write", "seqno=1") == -1,
	       "trace_import_cancel (%d)", ret);
	close(fence);
	close(tl);
	munmap((void *)word, 4096);
}

/* Closing a context ends its pending fences: close, unregister, end. */
TEST(context_close)
{
	struct plan p = { 0 };
	uint64_t context;
	int other, fence, ret;
	HsaEvent *ev;

	if (skip_without_kfd("trace_context_close"))
		return;
	ev = new_event();
	other = open_kfdsync();
	trace_clear();
	ret = __ev_register(other, ev->EventId, slot_addr(ev), NULL);
	fence = __export(other, ev->EventId, 0, 0);
	context = registered_context(me, ev->EventId);
	close(other);
	step(&p, "kfdsync_end", "cause=close error=-125 tgid=%d id=0", me);
	step(&p, "kfdsync_unregister", "tgid=%d id=%u context=%" PRIu64, me, ev->EventId,
	     context);
	same_task(&p);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=1 status=-125", context);
	same_task(&p);
	trace_read();
	tap_ok(!ret && fence >= 0 && fence_status(fence) == -ECANCELED && plan_holds(&p),
	       "trace_context_close");
	if (fence >= 0)
		close(fence);
	hsaKmtDestroyEvent(ev);
}

/* A process that exits with a pending fence of its own. */
static int child_exit_owner(int sock)
{
	struct msg m;
	HsaEvent *ev;
	int fence, code;

	child_setup();
	code = child_pending_fence(&ev, &fence);
	if (code)
		return code;
	msg_send(sock, MSG_READY, (int32_t)ev->EventId, NULL, 0);
	msg_recv(sock, &m, NULL, NULL);
	/* Exit with everything open: the address space goes first. */
	_exit(0);
}

TEST(owner_exit)
{
	struct plan p = { 0 };
	uint64_t context;
	struct msg m = { 0 };
	int sock, code;
	pid_t pid;

	if (skip_without_kfd("trace_owner_exit"))
		return;
	trace_clear();
	pid = spawn_child("exit_owner", &sock);
	if (!msg_recv(sock, &m, NULL, NULL) || m.cmd != MSG_READY)
		tap_diag("the child did not get ready");
	msg_send(sock, MSG_EXIT, 0, NULL, 0);
	code = reap(pid);
	close(sock);
	context = registered_context(pid, (uint32_t)m.val);
	step(&p, "kfdsync_register", "tgid=%d id=%d", pid, m.val);
	step(&p, "kfdsync_export", "tgid=%d id=%d context=%" PRIu64 " seqno=1 status=0", pid,
	     m.val, context);
	step(&p, "kfdsync_end", "cause=exit error=-125 tgid=%d", pid);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=1 status=-125", context);
	same_task(&p);
	trace_read();
	tap_ok(code == 0 && plan_holds(&p), "trace_owner_exit (child %d)", code);
	/* amdkfd frees the child's process afterwards, from a worker. */
	if (relay_mode)
		tap_skip("relay mode: no free hook", "trace_amdkfd_free");
	else
		tap_ok(trace_wait_for("kfdsync_end", "cause=free error=-5"), "trace_amdkfd_free");
}

/* ---- kfdsync monitor ---- */

/* Read what is there on @fd within @ms into @buf (NUL-terminated). */
static size_t read_some(int fd, char *buf, size_t len, size_t have, int ms)
{
	ssize_t n;

	while (have + 1 < len && readable(fd, ms)) {
		n = read(fd, buf + have, len - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		if (ms)
			ms = 100;	/* what follows comes at once */
	}
	buf[have] = '\0';
	return have;
}

/*
 * 'kfdsync monitor --json --pid ME' while a fence is signalled and one
 * ends by an unregistration: the steps, with their causes.
 */
TEST(monitor_cli)
{
	int out[2], err[2], status, fence, pending;
	uint64_t age, context;
	static char text[16384];
	char errtext[512] = "", pidarg[16];
	size_t n = 0;
	HsaEvent *ev;
	pid_t pid;

	if (skip_without_kfd("monitor_cli"))
		return;
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		tap_bail("pipe: %s", strerror(errno));
	snprintf(pidarg, sizeof(pidarg), "%d", me);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		execl(KFDSYNC_CLI, "kfdsync", "monitor", "--json", "--pid", pidarg, "--count", "8",
		      "--duration", "30000", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	read_some(err[0], errtext, sizeof(errtext), 0, WAIT_MS);
	errtext[strcspn(errtext, "\n")] = '\0';
	tap_ok(strstr(errtext, "following") != NULL, "monitor_follows (%s)", errtext);

	/* A signalled fence: export, signal, signalled (3 lines). */
	age = ev_age(kfdsync, ev1->EventId);
	fence = export(kfdsync, ev1->EventId, age);
	hsaKmtSetEvent(ev1);
	readable(fence, WAIT_MS);
	close(fence);
	/* One ended by the unregistration (5 lines). */
	ev = registered_event(&context);
	pending = export(kfdsync, ev->EventId, 0);
	unregister(ev);

	n = read_some(out[0], text, sizeof(text), 0, WAIT_MS);
	status = reap(pid);
	tap_ok(status == 0, "monitor_exits_after_count (%d)", status);
	tap_ok(strstr(text, "\"step\": \"export\"") && strstr(text, "\"step\": \"signal\"") &&
	       strstr(text, "\"step\": \"signalled\", \"owner\"") &&
	       strstr(text, "\"cause\": \"signalled\", \"life_ms\""),
	       "monitor_json_signalled");
	tap_ok(strstr(text, "\"step\": \"ended\"") &&
	       strstr(text, "\"cause\": \"unregister\"") && strstr(text, "\"status\": -125") &&
	       strstr(text, "\"step\": \"register\"") && strstr(text, "\"step\": \"unregister\""),
	       "monitor_json_ended_with_cause");
	if (n && (!strstr(text, "\"cause\": \"unregister\"") ||
		  !strstr(text, "\"step\": \"signal\"")))
		tap_diag("monitor printed:\n%s", text);
	close(out[0]);
	close(err[0]);
	close(pending);
	hsaKmtDestroyEvent(ev);
}

/* ---- hooks mode: amdkfd's own ends ---- */

/* A pending fence of a fresh event, for the ends below. */
static int pending_fence(HsaEvent **ev, uint64_t *context)
{
	*ev = registered_event(context);
	return export(kfdsync, (*ev)->EventId, 0);
}

/* @cause's end, then the fence's, in the same task; the fence ends @error. */
static bool ended_by(int fence, uint64_t context, const char *cause, int error,
		     const char *who)
{
	struct plan p = { 0 };

	step(&p, "kfdsync_end", "cause=%s error=%d %s", cause, error, who);
	step(&p, "kfdsync_fence_end", "context=%" PRIu64 " seqno=1 status=%d", context, error);
	same_task(&p);
	if (!readable(fence, WAIT_MS))
		tap_diag("the fence did not end");
	trace_read();
	return fence_status(fence) == error && plan_holds(&p);
}

TEST(amdkfd_destroy)
{
	struct kfdsync_event_unregister u = { 0 };
	uint64_t context;
	char who[32];
	HsaEvent *ev;
	int fence;

	if (skip_without_kfd("trace_amdkfd_destroy"))
		return;
	if (relay_mode) {
		tap_skip("relay mode: no destroy hook", "trace_amdkfd_destroy");
		return;
	}
	trace_clear();
	fence = pending_fence(&ev, &context);
	u.event_id = ev->EventId;
	hsaKmtDestroyEvent(ev);
	snprintf(who, sizeof(who), "id=%u", u.event_id);
	tap_ok(ended_by(fence, context, "destroy", -ECANCELED, who), "trace_amdkfd_destroy");
	ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u);
	close(fence);
}

static bool inject_exception(void)
{
	return !kfdsim_inject(sim, queue, KFDSIM_INJECT_HW_EXCEPTION);
}

static bool inject_reset(void)
{
	return !write_text(INJECT, "reset");
}

/* As amdgpu's going away ends every slot (its notifier's walk). */
static bool inject_unload(void)
{
	return !write_text(INJECT, "end");
}

/* A pending fence of a fresh event, ended by @inject with @error: @cause. */
static void hooks_end(const char *name, const char *cause, int error, bool (*inject)(void))
{
	uint64_t context;
	HsaEvent *ev;
	int fence;

	if (skip_without_kfd(name))
		return;
	if (relay_mode) {
		tap_skip("relay mode: amdkfd's ends reach kfdsync through the hooks", "%s", name);
		return;
	}
	trace_clear();
	fence = pending_fence(&ev, &context);
	if (!inject())
		tap_diag("%s: cannot inject it", name);
	tap_ok(ended_by(fence, context, cause, error, "tgid=0"), "%s", name);
	close(fence);
	unregister(ev);
	hsaKmtDestroyEvent(ev);
}

/* These end every fence of this process (the last two, of every one): last. */
TEST(hw_exception)
{
	hooks_end("trace_hw_exception", "exception", -EIO, inject_exception);
}

TEST(gpu_reset)
{
	hooks_end("trace_gpu_reset", "reset", -EIO, inject_reset);
}

TEST(amdgpu_unload)
{
	hooks_end("trace_amdgpu_unload", "unload", -EIO, inject_unload);
}

static const struct export_child children[] = {
	{ "exit_owner", child_exit_owner },
	{ NULL, NULL },
};

/*
 * Where amdkfd refuses every process without a GPU (Debian's 7.x), the CPU
 * timelines' and imports' events are still tested; the rest is skipped.
 */
static void require_no_kfd(void)
{
	scrub_hsa_env();
	if (access(KFDSYNC_DEV, F_OK)) {
		printf("TAP version 13\n1..0 # SKIP no %s (kfdsync not loaded)\n", KFDSYNC_DEV);
		exit(0);
	}
}

int main(int argc, char **argv)
{
	const char *role;
	int sock;

	no_kfd = getenv("KFDSYNC_KFD_UNUSABLE");
	if (!no_kfd || child_args(argc, argv, &role, &sock))
		return export_main(argc, argv, setup, children);
	harness_require = require_no_kfd;
	harness_setup = setup_no_kfd;
	harness_teardown = teardown_no_kfd;
	return harness_main(argc, argv);
}
