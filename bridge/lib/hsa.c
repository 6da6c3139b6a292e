// SPDX-License-Identifier: MIT
/*
 * HSA signals: a watched condition on the signal's value, woken by its KFD
 * event (export), and imports that store into a signal and set its event.
 * No libhsa-runtime here: amd_signal_t is read at its documented offsets
 * (checked at build time against ROCr's header, below).
 *
 * Hints: what <kfdsync_hsa.h> registers as a ROCr async handler per export
 * (see kfdsync.h, "Hints"). ROCr keeps a handler's argument until the
 * condition holds or the signal is destroyed, and 5.2 cannot withdraw it;
 * so the argument is a number, looked up in a process-wide table under
 * one lock, never a pointer ROCr could see freed. An entry goes when its
 * handler runs, when its fence's watchdog deadline has passed (swept at
 * every new hint), or when its context is freed (kfdsync_ctx_free() forgets
 * them before it closes the fd; the handler uses the fd under the same
 * lock).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kfdsync.h"
#include "internal.h"

/*
 * ROCr's amd_signal_t (amd_hsa_signal.h): the fields kfdsync needs. ROCr
 * (5.2) has no supported call that maps an hsa_signal_t to its KFD event
 * (hsa_amd_signal_value_pointer() gives the value only, and only for
 * GPU_ONLY or IPC signals), so libkfdsync reads the layout, which its
 * build checks against ROCr's header where libhsa-runtime-dev is installed.
 */
#define KFDSYNC_SIGNAL_KIND_USER	1
#define AMD_SIGNAL_OFF_KIND		0
#define AMD_SIGNAL_OFF_VALUE		8
#define AMD_SIGNAL_OFF_MAILBOX		16
#define AMD_SIGNAL_OFF_EVENT_ID		24

#ifdef KFDSYNC_HAVE_ROCR_HEADERS
#include <stddef.h>
#include <hsa/amd_hsa_signal.h>
_Static_assert(offsetof(amd_signal_t, kind) == AMD_SIGNAL_OFF_KIND, "amd_signal_t.kind");
_Static_assert(sizeof(((amd_signal_t *)0)->kind) == 8, "amd_signal_t.kind size");
_Static_assert(offsetof(amd_signal_t, value) == AMD_SIGNAL_OFF_VALUE, "amd_signal_t.value");
_Static_assert(sizeof(((amd_signal_t *)0)->value) == 8, "amd_signal_t.value size");
_Static_assert(offsetof(amd_signal_t, event_mailbox_ptr) == AMD_SIGNAL_OFF_MAILBOX,
	       "amd_signal_t.event_mailbox_ptr");
_Static_assert(offsetof(amd_signal_t, event_id) == AMD_SIGNAL_OFF_EVENT_ID,
	       "amd_signal_t.event_id");
_Static_assert(sizeof(((amd_signal_t *)0)->event_id) == 4, "amd_signal_t.event_id size");
_Static_assert(AMD_SIGNAL_KIND_USER == KFDSYNC_SIGNAL_KIND_USER, "AMD_SIGNAL_KIND_USER");
#endif

KFDSYNC_EXPORT int kfdsync_hsa_signal_from_amd_signal(const void *amd_signal,
						      struct kfdsync_hsa_signal *sig)
{
	const unsigned char *p = amd_signal;
	int64_t kind;
	uint64_t mailbox;
	uint32_t event_id;

	if (!p || !sig || (uintptr_t)p % 8)
		return -EINVAL;
	memcpy(&kind, p + AMD_SIGNAL_OFF_KIND, sizeof(kind));
	memcpy(&mailbox, p + AMD_SIGNAL_OFF_MAILBOX, sizeof(mailbox));
	memcpy(&event_id, p + AMD_SIGNAL_OFF_EVENT_ID, sizeof(event_id));
	if (kind != KFDSYNC_SIGNAL_KIND_USER || !mailbox || !event_id)
		return -EINVAL;
	memset(sig, 0, sizeof(*sig));
	sig->value = (int64_t *)(uintptr_t)(p + AMD_SIGNAL_OFF_VALUE);
	sig->mailbox = mailbox;
	sig->event_id = event_id;
	return 0;
}

/* A signal description the caller may pass in: reserved space zero. */
static bool hsa_signal_ok(const struct kfdsync_hsa_signal *sig)
{
	if (!sig)
		return false;
	for (size_t i = 0; i < sizeof(sig->reserved) / sizeof(sig->reserved[0]); i++)
		if (sig->reserved[i])
			return false;
	return true;
}

/* Register the signal's event with the context unless it is already. */
static int hsa_signal_register(struct kfdsync_ctx *ctx, const struct kfdsync_hsa_signal *sig)
{
	int ret;

	if (!hsa_signal_ok(sig))
		return -EINVAL;
	/*
	 * Never with a relay: ROCr's own threads wait on the signal's event,
	 * and a relay would take their wake-ups (see kfdsync.h, "The relay").
	 */
	ret = kfdsync_event_add_relay(ctx, sig->event_id, sig->mailbox, NULL, false);
	return ret == -EEXIST ? 0 : ret;
}

static int export_condition(struct kfdsync_ctx *ctx, const struct kfdsync_hsa_signal *sig,
			    enum kfdsync_hsa_condition condition, int64_t compare_value,
			    int64_t watchdog_ns, int eventfd)
{
	struct kfdsync_export_condition arg;
	int fd = kfdsync_ctx_fd(ctx), ret;

	if (fd < 0)
		return fd;
	ret = hsa_signal_register(ctx, sig);
	if (ret < 0)
		return ret;
	memset(&arg, 0, sizeof(arg));
	arg.event_id = sig->event_id;
	arg.flags = eventfd >= 0 ? KFDSYNC_CONDITION_EVENTFD : 0;
	arg.value_addr = (uint64_t)(uintptr_t)sig->value;
	arg.compare_value = compare_value;
	arg.deadline_ns = watchdog_ns > 0 ? (uint64_t)(kfdsync_now_ns() + watchdog_ns) : 0;
	arg.condition = (uint32_t)condition;
	arg.fd = eventfd;
	ret = kfdsync_ctx_ioctl(fd, KFDSYNC_IOCTL_EXPORT_CONDITION, &arg);
	return ret < 0 ? ret : arg.fd;
}

KFDSYNC_EXPORT int kfdsync_hsa_signal_export_sync_file(struct kfdsync_ctx *ctx,
						       const struct kfdsync_hsa_signal *sig,
						       enum kfdsync_hsa_condition condition,
						       int64_t compare_value, int64_t watchdog_ns)
{
	return export_condition(ctx, sig, condition, compare_value, watchdog_ns, -1);
}

KFDSYNC_EXPORT int kfdsync_hsa_signal_export_eventfd(struct kfdsync_ctx *ctx,
						     const struct kfdsync_hsa_signal *sig,
						     enum kfdsync_hsa_condition condition,
						     int64_t compare_value, int64_t watchdog_ns,
						     int eventfd)
{
	int ret;

	if (eventfd < 0)
		return -EINVAL;
	ret = export_condition(ctx, sig, condition, compare_value, watchdog_ns, eventfd);
	return ret < 0 ? ret : 0;
}

KFDSYNC_EXPORT int kfdsync_hsa_signal_import_sync_file(struct kfdsync_ctx *ctx,
						       int sync_file_fd,
						       const struct kfdsync_hsa_signal *sig,
						       uint32_t flags, int64_t value,
						       int64_t error_value)
{
	struct kfdsync_import_desc desc;

	if (!hsa_signal_ok(sig) || (flags & ~KFDSYNC_HSA_IMPORT_SUBTRACT))
		return -EINVAL;
	memset(&desc, 0, sizeof(desc));
	/* The value first, then the event: a woken waiter finds it written. */
	desc.flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_SET_EVENT;
	if (flags & KFDSYNC_HSA_IMPORT_SUBTRACT)
		desc.flags |= KFDSYNC_IMPORT_SUB;
	desc.event_id = sig->event_id;
	desc.addr = sig->value;
	desc.value = (uint64_t)value;
	desc.error_value = (uint64_t)error_value;
	return kfdsync_import_sync_file(ctx, sync_file_fd, &desc);
}

/* ---- hints ---- */

/* How long after its fence's deadline a hint stays live (timer slack). */
#define HINT_SLACK_NS	1000000000LL

struct hint {
	struct hint *next;
	uint64_t id;
	struct kfdsync_ctx *ctx;
	uint32_t event_id;
	int64_t expires_ns;	/* CLOCK_MONOTONIC: its fence has ended by then */
};

static pthread_mutex_t hints_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hint *hints;	/* under hints_lock */
static uint64_t hints_next_id = 1;

/* Unlink and return the hint @id, or NULL. Called with hints_lock held. */
static struct hint *hint_take(uint64_t id)
{
	for (struct hint **p = &hints; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			struct hint *h = *p;

			*p = h->next;
			return h;
		}
	}
	return NULL;
}

/* Free the hints whose fences have ended for sure. hints_lock held. */
static void hints_sweep(int64_t now)
{
	for (struct hint **p = &hints; *p;) {
		struct hint *h = *p;

		if (h->expires_ns < now) {
			*p = h->next;
			free(h);
		} else {
			p = &h->next;
		}
	}
}

static void hints_forget(struct kfdsync_ctx *ctx);

KFDSYNC_EXPORT int kfdsync_hsa_signal_hint_new(struct kfdsync_ctx *ctx,
					       const struct kfdsync_hsa_signal *sig,
					       int64_t watchdog_ns, uint64_t *out)
{
	struct kfdsync_module_info mi;
	int64_t life, now;
	struct hint *h;
	int ret;

	if (!ctx || !hsa_signal_ok(sig) || !out)
		return -EINVAL;
	/*
	 * The longest its fence can live: the module's rule for deadlines
	 * (0: watchdog_ms; capped at watchdog_max_ms), read now, like the
	 * export that follows.
	 */
	ret = kfdsync_ctx_get_module_info(ctx, &mi);
	if (ret < 0)
		return ret;
	life = watchdog_ns > 0 ? watchdog_ns : (int64_t)mi.watchdog_ms * 1000000;
	if (life > (int64_t)mi.watchdog_max_ms * 1000000)
		life = (int64_t)mi.watchdog_max_ms * 1000000;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	now = kfdsync_now_ns();
	h->ctx = ctx;
	h->event_id = sig->event_id;
	h->expires_ns = now + life + HINT_SLACK_NS;
	pthread_mutex_lock(&hints_lock);
	hints_sweep(now);
	h->id = hints_next_id++;
	h->next = hints;
	hints = h;
	ctx->forget_hints = hints_forget;
	*out = h->id;
	pthread_mutex_unlock(&hints_lock);
	return 0;
}

KFDSYNC_EXPORT bool kfdsync_hsa_signal_hint_handler(int64_t value, void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	struct hint *h;

	(void)value;
	pthread_mutex_lock(&hints_lock);
	h = hint_take(id);
	if (h && h->expires_ns >= kfdsync_now_ns()) {
		/*
		 * Relay mode: report the signal; kfdsync checks the value. With
		 * the hooks (EBUSY), set the event: the cpu_set hook sees it,
		 * and it covers a store made before ROCr's thread waited.
		 */
		if (kfdsync_event_relay(h->ctx, h->event_id) == -EBUSY)
			kfdsync_relays_set_event(h->ctx->relays, h->event_id);
	}
	pthread_mutex_unlock(&hints_lock);
	free(h);
	return false;
}

KFDSYNC_EXPORT void kfdsync_hsa_signal_hint_cancel(uint64_t id)
{
	pthread_mutex_lock(&hints_lock);
	free(hint_take(id));
	pthread_mutex_unlock(&hints_lock);
}

/* Drop the hints of @ctx (of its event @event_id only, if not 0). */
static void hints_drop(struct kfdsync_ctx *ctx, uint32_t event_id)
{
	pthread_mutex_lock(&hints_lock);
	for (struct hint **p = &hints; *p;) {
		struct hint *h = *p;

		if (h->ctx == ctx && (!event_id || h->event_id == event_id)) {
			*p = h->next;
			free(h);
		} else {
			p = &h->next;
		}
	}
	pthread_mutex_unlock(&hints_lock);
}

/* The context's forget_hints: every hint of @ctx inert. */
static void hints_forget(struct kfdsync_ctx *ctx)
{
	hints_drop(ctx, 0);
}

KFDSYNC_EXPORT int kfdsync_hsa_signal_release(struct kfdsync_ctx *ctx,
					      const struct kfdsync_hsa_signal *sig)
{
	if (!ctx || !hsa_signal_ok(sig))
		return -EINVAL;
	/* Its hints would find the event gone; they need not wait for that. */
	hints_drop(ctx, sig->event_id);
	return kfdsync_event_remove(ctx, sig->event_id);
}
