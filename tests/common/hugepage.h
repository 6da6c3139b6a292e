/* SPDX-License-Identifier: MIT */
/*
 * Transparent huge pages for tests: an area of 2 MiB-aligned huge pages,
 * and how much of a mapping huge pages back (/proc/self/smaps).
 */
#ifndef KFDSYNC_TESTS_HUGEPAGE_H
#define KFDSYNC_TESTS_HUGEPAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_SIZE		(2UL << 20)

/* kB of transparent huge pages in the mapping of @p (its AnonHugePages), or -1. */
static inline long anon_huge_kb(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start, end, a = (uintptr_t)p;
	bool in = false;
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = a >= start && a < end;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * @n transparent huge pages (MADV_HUGEPAGE), 2 MiB-aligned, each touched;
 * NULL if the mapping fails. Whether they really are huge: anon_huge_kb().
 */
static inline char *thp_area(unsigned int n)
{
	char *raw = mmap(NULL, (n + 1) * HUGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
	unsigned int i;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1));
	madvise(p, n * HUGE_SIZE, MADV_HUGEPAGE);
	for (i = 0; i < n; i++)
		p[i * HUGE_SIZE] = 1;
	return p;
}

#endif /* KFDSYNC_TESTS_HUGEPAGE_H */
