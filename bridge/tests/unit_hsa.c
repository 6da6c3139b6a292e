// SPDX-License-Identifier: MIT
/*
 * libkfdsync host unit tests of the HSA signal functions: reading an
 * amd_signal_t, and the argument checks that need no kfdsync.ko.
 */
#include <stdbool.h>
#include <string.h>

#include "kfdsync.h"
/* The hint plumbing: public in <kfdsync_hsa.h>, which needs ROCr's headers. */
#include "../lib/internal.h"
#include "tap.h"

/* ROCr's amd_signal_t (amd_hsa_signal.h), as far as kfdsync reads it. */
struct fake_amd_signal {
	int64_t kind;
	int64_t value;
	uint64_t event_mailbox_ptr;
	uint32_t event_id;
	uint32_t reserved1;
	uint64_t rest[5];
} __attribute__((aligned(64)));

int main(void)
{
	struct fake_amd_signal s = {
		.kind = 1, .value = 42, .event_mailbox_ptr = 0x7f0000001008, .event_id = 1,
	};
	struct kfdsync_hsa_signal sig, bad = { 0 };
	const struct {
		const char *name;
		int64_t kind;
		uint64_t mailbox;
		uint32_t id;
	} refused[] = {
		{ "from_amd_signal_doorbell_kind", -1, 0x1000, 1 },
		{ "from_amd_signal_invalid_kind", 0, 0x1000, 1 },
		{ "from_amd_signal_no_mailbox", 1, 0, 1 },
		{ "from_amd_signal_no_event", 1, 0x1000, 0 },
	};
	int ret;

	bool zeroed = true;

	tap_plan(4 + sizeof(refused) / sizeof(refused[0]) + 8);

	memset(&sig, 0xa5, sizeof(sig));
	ret = kfdsync_hsa_signal_from_amd_signal(&s, &sig);
	for (size_t i = 0; i < sizeof(sig.reserved) / sizeof(sig.reserved[0]); i++)
		zeroed &= sig.reserved[i] == 0;
	tap_ok(ret == 0 && sig.value == &s.value && *sig.value == 42 &&
	       sig.mailbox == s.event_mailbox_ptr && sig.event_id == 1 && zeroed,
	       "from_amd_signal_fields (%d)", ret);
	tap_ok(kfdsync_hsa_signal_from_amd_signal(NULL, &sig) == -EINVAL,
	       "from_amd_signal_null");
	tap_ok(kfdsync_hsa_signal_from_amd_signal(&s, NULL) == -EINVAL,
	       "from_amd_signal_null_out");
	tap_ok(kfdsync_hsa_signal_from_amd_signal((char *)&s + 4, &sig) == -EINVAL,
	       "from_amd_signal_misaligned");
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct fake_amd_signal t = s;

		t.kind = refused[i].kind;
		t.event_mailbox_ptr = refused[i].mailbox;
		t.event_id = refused[i].id;
		tap_ok(kfdsync_hsa_signal_from_amd_signal(&t, &sig) == -EINVAL, "%s",
		       refused[i].name);
	}

	/* No context: -EINVAL before anything else. */
	tap_ok(kfdsync_hsa_signal_export_sync_file(NULL, &sig, KFDSYNC_HSA_EQ, 0, 0) == -EINVAL,
	       "export_null_ctx");
	tap_ok(kfdsync_hsa_signal_export_eventfd(NULL, &sig, KFDSYNC_HSA_EQ, 0, 0, -1) == -EINVAL,
	       "export_eventfd_bad_fd");
	bad.reserved[4] = 1;
	tap_ok(kfdsync_hsa_signal_import_sync_file(NULL, 0, &bad, 0, 1, 1) == -EINVAL,
	       "import_null_ctx");

	/* Hints: bad arguments, and unknown hints are harmless. */
	uint64_t hint = 77;

	tap_ok(kfdsync_hsa_signal_hint_new(NULL, &sig, 0, &hint) == -EINVAL && hint == 77,
	       "hint_new_null_ctx");
	tap_ok(kfdsync_hsa_signal_hint_new((struct kfdsync_ctx *)&hint, &bad, 0, &hint) ==
	       -EINVAL, "hint_new_reserved_not_zero");
	tap_ok(kfdsync_hsa_signal_hint_new((struct kfdsync_ctx *)&hint, &sig, 0, NULL) ==
	       -EINVAL, "hint_new_null_out");
	/* ROCr calls with the number it was given: false, "drop me". */
	tap_ok(!kfdsync_hsa_signal_hint_handler(0, (void *)(uintptr_t)12345),
	       "hint_handler_unknown_hint_returns_false");
	kfdsync_hsa_signal_hint_cancel(12345);
	kfdsync_hsa_signal_hint_cancel(0);
	tap_ok(true, "hint_cancel_unknown_is_noop");
	return tap_exit();
}
