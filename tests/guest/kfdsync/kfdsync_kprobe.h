/* SPDX-License-Identifier: MIT */
/*
 * Kprobe events for the guest tests: who calls a kernel function, and from
 * where, while a test runs.
 *
 * probe_calls() puts a kprobe event on a function, records it in a tracefs
 * instance of its own (with the kernel stack of each call if asked), runs
 * the test's function, and counts the calls, and those whose stack holds a
 * given function. Tasks' names are not recorded (options/record-cmd: it
 * would hook sched_switch at every enable, which QEMU TCG guests dislike).
 */
#ifndef KFDSYNC_TESTS_KFDSYNC_KPROBE_H
#define KFDSYNC_TESTS_KFDSYNC_KPROBE_H

#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmod.h"

/* Tracefs with kprobe events, mounted if need be; NULL without. */
static inline const char *tracing_dir(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];
	unsigned int i;

	mount("nodev", dirs[0], "tracefs", 0, NULL);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/kprobe_events", dirs[i]);
		if (!access(path, W_OK))
			return dirs[i];
	}
	return NULL;
}

static inline int trace_write(const char *dir, const char *file, const char *text, int flags)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return write_text_flags(path, text, flags);
}

/* @line names the function @sym as a word (" => sym+0x1/0x2 [mod]"). */
static inline bool line_has_symbol(const char *line, const char *sym)
{
	size_t n = strlen(sym);
	const char *p;

	for (p = strstr(line, sym); p; p = strstr(p + 1, sym))
		if ((p == line || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
		    !(isalnum((unsigned char)p[n]) || p[n] == '_'))
			return true;
	return false;
}

struct probe_result {
	int calls;	/* calls recorded */
	int from;	/* calls with @from on their stack */
	int also;	/* calls with @also on their stack */
	char first[512];	/* the first stack with @from, one line */
};

/*
 * Calls of kernel function @sym while @fn(@arg) runs, recorded if @filter
 * (a tracefs filter, or NULL) holds; with @from (and @also), also those
 * with function @from (@also) on their kernel stack. Return: 0, or -1 if
 * kprobe events, tracefs instances or the probe cannot be used (the test
 * then skips).
 */
static inline int probe_calls(const char *sym, const char *filter, const char *from,
			      const char *also, void (*fn)(void *), void *arg,
			      struct probe_result *res)
{
	const char *t = tracing_dir();
	char inst[128], def[192], path[256], line[1024], cur[512] = "";
	bool in_from = false, in_also = false;
	FILE *f;

	memset(res, 0, sizeof(*res));
	if (!t)
		return -1;
	snprintf(def, sizeof(def), "-:kfdsync_probe/call\n");
	trace_write(t, "kprobe_events", def, O_APPEND);
	snprintf(def, sizeof(def), "p:kfdsync_probe/call %s\n", sym);
	if (trace_write(t, "kprobe_events", def, O_APPEND))
		return -1;
	/* Before the instance: it copies the option. */
	trace_write(t, "options/record-cmd", "0", O_TRUNC);
	snprintf(inst, sizeof(inst), "%s/instances/kfdsync_probe_%d", t, (int)getpid());
	if (mkdir(inst, 0700)) {
		trace_write(t, "kprobe_events", "-:kfdsync_probe/call\n", O_APPEND);
		trace_write(t, "options/record-cmd", "1", O_TRUNC);
		return -1;
	}
	if (from)
		trace_write(inst, "options/stacktrace", "1", O_TRUNC);
	trace_write(inst, "buffer_size_kb", "8192", O_TRUNC);
	if (filter)
		trace_write(inst, "events/kfdsync_probe/call/filter", filter, O_TRUNC);
	trace_write(inst, "events/kfdsync_probe/call/enable", "1", O_TRUNC);
	fn(arg);
	trace_write(inst, "events/kfdsync_probe/call/enable", "0", O_TRUNC);

	snprintf(path, sizeof(path), "%s/trace", inst);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (strstr(line, "call: (")) {
			res->calls++;
			in_from = false;
			in_also = false;
			cur[0] = '\0';
			continue;
		}
		if (!from || !strstr(line, " => "))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (strlen(cur) + strlen(line) < sizeof(cur))
			strcat(cur, line + strspn(line, " "));
		if (!in_from && line_has_symbol(line, from)) {
			in_from = true;
			res->from++;
		}
		if (also && !in_also && line_has_symbol(line, also)) {
			in_also = true;
			res->also++;
		}
		if (in_from && res->from == 1)
			snprintf(res->first, sizeof(res->first), "%s", cur);
	}
	if (f)
		fclose(f);
	rmdir(inst);
	trace_write(t, "kprobe_events", "-:kfdsync_probe/call\n", O_APPEND);
	trace_write(t, "options/record-cmd", "1", O_TRUNC);
	return 0;
}

#endif /* KFDSYNC_TESTS_KFDSYNC_KPROBE_H */
