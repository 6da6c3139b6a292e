/* SPDX-License-Identifier: MIT */
/*
 * The calling process's threads by name, and their wake-ups, from
 * /proc/self/task: for counting libkfdsync's threads ("kfdsync-relay",
 * "kfdsync-import") and checking that they sleep when nothing happens.
 *
 * A thread's wake-ups are its context switches (voluntary + involuntary):
 * a thread asleep in the kernel that is never woken gains none.
 */
#ifndef KFDSYNC_TESTS_PROC_THREADS_H
#define KFDSYNC_TESTS_PROC_THREADS_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROC_THREADS_MAX 8192

struct proc_thread {
	int tid;
	uint64_t switches;	/* voluntary + nonvoluntary context switches */
};

/* Threads of this process whose comm starts with @prefix; their number. */
static inline int proc_threads(const char *prefix, struct proc_thread *out, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], line[128], comm[32] = "";
		uint64_t sw = 0, v;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %lu", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %lu", &v) == 1)
				sw += v;
		fclose(f);
		if (n < max && out) {
			out[n].tid = atoi(e->d_name);
			out[n].switches = sw;
		}
		n++;
	}
	closedir(d);
	return n;
}

/* Sum of the context switches of the threads named @prefix. */
static inline uint64_t proc_threads_switches(const char *prefix, int *count)
{
	static struct proc_thread t[PROC_THREADS_MAX];
	int n = proc_threads(prefix, t, PROC_THREADS_MAX), i;
	uint64_t sum = 0;

	for (i = 0; i < n && i < PROC_THREADS_MAX; i++)
		sum += t[i].switches;
	if (count)
		*count = n;
	return sum;
}

/*
 * The number of threads named @prefix ("" for every thread) once it is
 * @want: pthread_join() returns when the thread has released its stack, a
 * moment before the kernel drops it from /proc/self/task. Gives up after
 * about 10 s and returns the count then.
 */
static inline int proc_threads_settled(const char *prefix, int want)
{
	int n = proc_threads(prefix, NULL, 0);

	for (int i = 0; n != want && i < 10000; i++) {
		usleep(1000);
		n = proc_threads(prefix, NULL, 0);
	}
	return n;
}

#endif /* KFDSYNC_TESTS_PROC_THREADS_H */
