// SPDX-License-Identifier: MIT
/*
 * The examples' KFD signal events: see common.h.
 *
 * --gpu sim: amdkfd's own uAPI (<linux/kfd_ioctl.h>) on a /dev/kfd fd of
 * ours. A CPU-only amdkfd (the test guest, kfdsim) keeps signal events in a
 * kernel page, mapped here from /dev/kfd at the offset CREATE_EVENT returns;
 * an event's slot (what RELEASE_MEM writes) is its index in that page. No
 * libhsakmt: these examples build and run where it is not installed.
 *
 * --gpu real: libhsakmt (hsaKmtCreateEvent()), which on a dGPU allocates
 * the events page as GPU memory the queue can write; built only where
 * libhsakmt's header is found.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kfd_ioctl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <kfdsync.h>

#ifdef KFDSYNC_HAVE_HSAKMT
#include <hsakmt.h>
#endif

#include "common.h"

#define EVENTS_PAGE_SIZE (KFD_SIGNAL_EVENT_LIMIT * 8)

static enum gpu_kind kfd_kind;
static int kfd_fd = -1;		/* --gpu sim */
static uint64_t *events_page;	/* --gpu sim, mapped at the first event */
static bool hsakmt_open;	/* --gpu real */

static int kfd_ioctl(unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(kfd_fd, req, arg);
	} while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	return ret < 0 ? -errno : 0;
}

int kfd_open(enum gpu_kind kind)
{
	kfd_kind = kind;
	if (kind == GPU_REAL) {
#ifdef KFDSYNC_HAVE_HSAKMT
		if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS) {
			err("cannot open /dev/kfd (hsaKmtOpenKFD): is amdgpu loaded, and may "
			    "you open /dev/kfd?");
			return -ENODEV;
		}
		hsakmt_open = true;
		return 0;
#else
		err("--gpu real needs libhsakmt, which this build was made without");
		return -EOPNOTSUPP;
#endif
	}
	kfd_fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (kfd_fd < 0) {
		int ret = -errno;

		err("cannot open /dev/kfd: %s (is amdgpu loaded, and may you open it?)",
		    strerror(-ret));
		return ret;
	}
	return 0;
}

void kfd_close(void)
{
#ifdef KFDSYNC_HAVE_HSAKMT
	if (hsakmt_open)
		hsaKmtCloseKFD();
#endif
	hsakmt_open = false;
	if (events_page)
		munmap(events_page, EVENTS_PAGE_SIZE);
	events_page = NULL;
	if (kfd_fd >= 0)
		close(kfd_fd);
	kfd_fd = -1;
}

/* --gpu real: libhsakmt's event. */
static int event_new_hsakmt(struct kfd_event *ev)
{
#ifdef KFDSYNC_HAVE_HSAKMT
	HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };
	HsaEvent *e;

	if (hsaKmtCreateEvent(&desc, false, false, &e) != HSAKMT_STATUS_SUCCESS) {
		err("hsaKmtCreateEvent failed");
		return -EIO;
	}
	ev->hsa = e;
	ev->id = e->EventId;
	ev->slot = e->EventData.HWData2;
	return 0;
#else
	(void)ev;
	return -EOPNOTSUPP;
#endif
}

/* --gpu sim: an auto-reset signal event in amdkfd's kernel page. */
static int event_new_kfd(struct kfd_event *ev)
{
	struct kfd_ioctl_create_event_args a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.event_type = KFD_IOC_EVENT_SIGNAL;
	a.auto_reset = 1;
	ret = kfd_ioctl(AMDKFD_IOC_CREATE_EVENT, &a);
	if (ret) {
		err("cannot create a KFD signal event: %s", strerror(-ret));
		return ret;
	}
	ev->id = a.event_id;
	if (!events_page) {
		void *p = mmap(NULL, EVENTS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			       kfd_fd, (off_t)a.event_page_offset);

		if (p == MAP_FAILED) {
			ret = -errno;
			err("cannot map amdkfd's events page: %s", strerror(-ret));
			return ret;
		}
		events_page = p;
	}
	ev->slot = (uintptr_t)&events_page[a.event_slot_index];
	return 0;
}

int kfd_signal_event_new(struct kfdsync_ctx *ctx, struct kfd_event *ev)
{
	int ret;

	memset(ev, 0, sizeof(*ev));
	ret = kfd_kind == GPU_REAL ? event_new_hsakmt(ev) : event_new_kfd(ev);
	if (ret)
		return ret;
	ev->live = true;
	ret = kfdsync_event_add(ctx, ev->id, ev->slot, NULL);
	if (ret)
		err("cannot register KFD event %u with kfdsync: %s", ev->id, strerror(-ret));
	return ret;
}

void kfd_signal_event_destroy(struct kfd_event *ev)
{
	if (!ev->live)
		return;
#ifdef KFDSYNC_HAVE_HSAKMT
	if (ev->hsa) {
		hsaKmtDestroyEvent(ev->hsa);
		ev->hsa = NULL;
	}
#endif
	if (kfd_fd >= 0 && kfd_kind == GPU_SIM) {
		struct kfd_ioctl_destroy_event_args a = { .event_id = ev->id };

		(void)kfd_ioctl(AMDKFD_IOC_DESTROY_EVENT, &a);
	}
	ev->live = false;
}
