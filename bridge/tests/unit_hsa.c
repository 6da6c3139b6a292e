// SPDX-License-Identifier: MIT
/*
 * libkfdsync host unit tests of the HSA signal functions: reading an
 * amd_signal_t, and the argument checks that need no kfdsync.ko.
 */
#include <string.h>

#include "kfdsync.h"
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

	tap_plan(4 + sizeof(refused) / sizeof(refused[0]) + 3);

	ret = kfdsync_hsa_signal_from_amd_signal(&s, &sig);
	tap_ok(ret == 0 && sig.value == &s.value && *sig.value == 42 &&
	       sig.mailbox == s.event_mailbox_ptr && sig.event_id == 1 && sig.reserved == 0,
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
	bad.reserved = 1;
	tap_ok(kfdsync_hsa_signal_import_sync_file(NULL, 0, &bad, 0, 1, 1) == -EINVAL,
	       "import_null_ctx");
	return tap_exit();
}
