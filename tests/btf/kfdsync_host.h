/* SPDX-License-Identifier: MIT */
/*
 * What kmod/kfdsync_btf.c and kmod/kfdsync_abi.c, kernel code, need of the
 * kernel on the host, for the unit test that builds them there.
 */
#ifndef KFDSYNC_HOST_H
#define KFDSYNC_HOST_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;

#define U32_MAX			UINT32_MAX

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#define fallthrough		__attribute__((__fallthrough__))
#define kfdsync_btf_alloc(n)	calloc(n, sizeof(u32))
#define kfdsync_btf_release(p)	free(p)

#endif /* KFDSYNC_HOST_H */
