// SPDX-License-Identifier: MIT
/* The examples' shared helpers: see common.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kfdsync.h>

#include "common.h"

void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int parse_int(const char *opt, const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		err("%s: \"%s\" is not a number from %d to %d", opt, s, min, max);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int fence_state(int fd, int64_t *ts)
{
	struct kfdsync_fence_status fs = { 0 };
	struct kfdsync_sync_file_status st = { 0 };
	int ret = kfdsync_sync_file_get_status(fd, &st, &fs, 1);

	if (ret < 0)
		return ret;
	if (ts)
		*ts = (int64_t)fs.timestamp_ns;
	return st.status;
}
