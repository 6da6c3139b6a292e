// SPDX-License-Identifier: MIT
/*
 * kfdsync info: the module's ABI, kernel, hooks on amdkfd (or relay mode),
 * limits, and what is supported here and why not (kfdsync_ctx_get_caps()).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"

#include "commands.h"
#include "common.h"

static void usage_info(FILE *f)
{
	fprintf(f, "usage: %s info [--json]\n"
		"Report the kfdsync module: ABI, kernel, hooks on amdkfd (or relay\n"
		"mode), limits, and what is supported here (and why not).\n", prog);
}

/* The capability bits, by the names info prints. */
static const struct {
	uint32_t bit;
	const char *name;
} caps_names[] = {
	{ KFDSYNC_CAP_HOOKS, "hooks" }, { KFDSYNC_CAP_EVENTS, "events" },
	{ KFDSYNC_CAP_DISPATCH, "dispatch" }, { KFDSYNC_CAP_HSA, "hsa" },
	{ KFDSYNC_CAP_IMPORT, "import" }, { KFDSYNC_CAP_TIMELINES, "timelines" },
	{ KFDSYNC_CAP_DMABUF, "dmabuf" }, { KFDSYNC_CAP_DEADLINE, "deadline" },
	{ KFDSYNC_CAP_SYNCOBJ, "syncobj" }, { KFDSYNC_CAP_SYNCOBJ_EVENTFD, "syncobj_eventfd" },
	{ KFDSYNC_CAP_AMDGPU, "amdgpu" }, { KFDSYNC_CAP_MODULE_ABI, "module_abi" },
	{ KFDSYNC_CAP_AMDKFD_ABI, "amdkfd_abi" }, { KFDSYNC_CAP_HOOKS_WATCH, "hooks_watch" },
};

#define NCAPS (sizeof(caps_names) / sizeof(caps_names[0]))

/* The capabilities: JSON members "caps" and "missing", or two text lines. */
static void show_caps(FILE *o, const struct kfdsync_caps *caps, bool json)
{
	char why[256];
	bool first = true;

	fputs(json ? ", \"caps\": {" : "supports:", o);
	for (size_t i = 0; i < NCAPS; i++) {
		bool have = caps->supported & caps_names[i].bit;

		if (json)
			fprintf(o, "%s\"%s\": %s", i ? ", " : "", caps_names[i].name,
				have ? "true" : "false");
		else if (have)
			fprintf(o, " %s", caps_names[i].name);
	}
	fputs(json ? "}, \"missing\": {" : "\n", o);
	for (size_t i = 0; i < NCAPS; i++) {
		if (kfdsync_caps_why_not(caps, caps_names[i].bit, why, sizeof(why)) != 0)
			continue;
		if (json) {
			fprintf(o, "%s\"%s\": ", first ? "" : ", ", caps_names[i].name);
			json_string(o, why);
		} else {
			fprintf(o, "missing:  %s: %s\n", caps_names[i].name, why);
		}
		first = false;
	}
	if (json)
		fputc('}', o);
}

/* The gate's verdict in words. */
static const char *abi_verdict_name(uint32_t verdict)
{
	switch (verdict) {
	case KFDSYNC_AMDKFD_ABI_MATCH:
		return "matches";
	case KFDSYNC_AMDKFD_ABI_MISMATCH:
		return "matches no ABI this module implements";
	case KFDSYNC_AMDKFD_ABI_NO_BTF:
		return "no BTF to check";
	default:
		return "not checked";
	}
}

int cmd_info(int argc, char **argv)
{
	struct kfdsync_amdkfd_abi_info ai;
	struct kfdsync_module_status ms;
	struct kfdsync_caps caps;
	struct kfdsync_module_info mi;
	struct kfdsync_ctx *ctx;
	bool json;
	int c, ret;

	c = parse_json_opts(argc, argv, usage_info, &json);
	if (c >= 0)
		return c;
	if (optind != argc) {
		usage_info(stderr);
		return EXIT_USAGE;
	}
	ret = kfdsync_ctx_new(&ctx);
	if (ret) {
		fail_open(ret, "/dev/kfdsync", "contexts", "max_contexts");
		return 1;
	}
	ret = kfdsync_ctx_get_module_info(ctx, &mi);
	if (!ret && kfdsync_ctx_get_module_status(ctx, &ms))
		memset(&ms, 0, sizeof(ms));
	if (!ret && kfdsync_ctx_get_amdkfd_abi(ctx, &ai))
		memset(&ai, 0, sizeof(ai));
	if (!ret)
		ret = kfdsync_get_caps(ctx, KFDSYNC_CAPS_OPEN_KFD, &caps);
	kfdsync_ctx_free(ctx);
	if (!ret && mi.abi_version != KFDSYNC_ABI_VERSION) {
		fail("the loaded kfdsync module speaks ABI %u; this tool needs ABI %d",
		     mi.abi_version, KFDSYNC_ABI_VERSION);
		return 1;
	}
	if (ret) {
		fail("cannot query the kfdsync module: %s", strerror(-ret));
		return 1;
	}

	const char *mode = (mi.flags & KFDSYNC_INFO_RELAY_FORCED) ? "relay (forced)" :
			   !(mi.flags & KFDSYNC_INFO_AMDKFD_PRESENT) ? "waiting for amdgpu" :
			   mi.hooks ? "hooks" : "relay";

	if (json) {
		struct json_out j;
		FILE *o = json_start(&j);

		if (!o)
			return 1;
		fprintf(o, "{\"abi_version\": %u, \"kernel\": ", mi.abi_version);
		json_string(o, mi.release);
		fprintf(o, ", \"kernel_version\": \"%u.%u.%u\", \"mode\": ",
			mi.kernel_version >> 16, (mi.kernel_version >> 8) & 0xff,
			mi.kernel_version & 0xff);
		json_string(o, mode);
		fprintf(o, ", \"amdkfd_present\": %s, \"hooks\": [",
			(mi.flags & KFDSYNC_INFO_AMDKFD_PRESENT) ? "true" : "false");
		for (uint32_t bit = 1, n = 0; bit; bit <<= 1) {
			if (!(mi.hooks_supported & bit) || !kfdsync_hook_name(bit))
				continue;
			fprintf(o, "%s{\"name\": \"%s\", \"attached\": %s}", n++ ? ", " : "",
				kfdsync_hook_name(bit), (mi.hooks & bit) ? "true" : "false");
		}
		fprintf(o, "], \"relay_reason\": ");
		json_string(o, ms.detail);
		fprintf(o, ", \"verified\": ");
		json_string(o, ms.verified);
		fprintf(o, ", \"amdkfd_abi\": {\"verdict\": ");
		json_string(o, abi_verdict_name(ai.verdict));
		fprintf(o, ", \"abi\": ");
		json_string(o, ai.abi);
		fprintf(o, ", \"implemented\": ");
		json_string(o, ai.implemented);
		fprintf(o, ", \"reason\": ");
		json_string(o, ai.reason);
		fprintf(o, "}");
		fprintf(o, ", \"hooks_missed\": %llu, \"limits\": {\"max_contexts\": %u, "
			"\"max_events\": %u, \"max_fences\": %u, \"watchdog_ms\": %u, "
			"\"watchdog_max_ms\": %u}, \"user\": {\"contexts\": %u, "
			"\"max_contexts\": %u, \"timelines\": %u, \"max_timelines\": %u, "
			"\"events\": %u, \"max_events\": %u, \"fences\": %u, \"max_fences\": %u}",
			(unsigned long long)ms.hooks_missed, mi.max_contexts, mi.max_events,
			mi.max_fences, mi.watchdog_ms, mi.watchdog_max_ms, ms.user_contexts,
			ms.max_user_contexts, ms.user_timelines, ms.max_user_timelines,
			ms.user_events, ms.max_user_events, ms.user_fences, ms.max_user_fences);
		show_caps(o, &caps, true);
		fputs("}\n", o);
		return json_finish(&j, 0);
	}
	printf("kfdsync ABI %u on Linux %s\n", mi.abi_version, mi.release);
	printf("mode:     %s\n", mode);
	printf("amdkfd:   %s", abi_verdict_name(ai.verdict));
	if (ai.abi[0])
		printf(", ABI %s", ai.abi);
	if (ai.reason[0])
		printf(": %s", ai.reason);
	printf(" (this module implements ABI %s)\n",
	       ai.implemented[0] ? ai.implemented : ms.verified);
	if (ms.detail[0] && ai.verdict == KFDSYNC_AMDKFD_ABI_MATCH)
		printf("why:      %s\n", ms.detail);
	printf("hooks:   ");
	for (uint32_t bit = 1; bit; bit <<= 1) {
		if ((mi.hooks_supported & bit) && kfdsync_hook_name(bit))
			printf(" %s%s", kfdsync_hook_name(bit),
			       (mi.hooks & bit) ? "" : "(detached)");
	}
	printf("\nlimits:   %u events and %u pending fences per context; per user %u contexts, "
	       "%u timelines, %u events, %u pending fences\n", mi.max_events, mi.max_fences,
	       ms.max_user_contexts, ms.max_user_timelines, ms.max_user_events,
	       ms.max_user_fences);
	printf("you hold: %u contexts, %u timelines, %u events, %u pending fences\n",
	       ms.user_contexts, ms.user_timelines, ms.user_events, ms.user_fences);
	if (ms.hooks_missed)
		printf("missed:   %llu hook hits (their signals end by watchdog)\n",
		       (unsigned long long)ms.hooks_missed);
	printf("watchdog: %u ms by default, at most %u ms\n", mi.watchdog_ms,
	       mi.watchdog_max_ms);
	show_caps(stdout, &caps, false);
	return 0;
}
