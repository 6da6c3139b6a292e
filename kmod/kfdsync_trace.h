/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: tracepoints, a fence's whole life (TRACE_SYSTEM kfdsync).
 *
 * Every event that concerns a fence carries its dma_fence context (and
 * seqno), so that it joins the dma_fence core's own events
 * (dma_fence:dma_fence_init, _enable_signal, _signaled, ...), which print
 * both as 32-bit numbers. An event's fences share its context: the
 * ordered fence "the next signal after age A" is seqno A + 1; a condition
 * fence has a context of its own and seqno 1; a CPU timeline's fences are
 * its value.
 *
 * How a fence ends (kfdsync_fence_end): its status, 1 signalled or -errno,
 * and dropped=1 if it never signalled because its last reference was
 * already going (nobody held it).
 * Why it ended with an error is told first, in the same task, by the step
 * that ends it: kfdsync_watchdog for the watchdog, kfdsync_end (with its
 * cause) for everything else; each such step ends its fences synchronously,
 * before that task emits any other kfdsync event. docs/tracing.md shows the
 * whole life and `kfdsync monitor` follows it.
 *
 * Tracepoints only copy values the path already has: none takes a lock,
 * reads user memory or changes what the path does (reading an imported
 * fence's names on 6.17+ is an RCU read-side section, as the kernel's own
 * sync_file info does); disabled, each costs a static branch.
 */

#ifndef KFDSYNC_TRACE_CONSTS_H
#define KFDSYNC_TRACE_CONSTS_H

#include <linux/dma-fence.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <linux/types.h>

#include <linux/kfdsync.h>

/* Where a counted signal came from (kfdsync_slot_signal). */
#define KFDSYNC_TRACE_GPU		0	/* amdkfd acknowledged a GPU write */
#define KFDSYNC_TRACE_CPU		1	/* amdkfd set the event from the CPU */
#define KFDSYNC_TRACE_SCAN		2	/* a write pending at a registration */
#define KFDSYNC_TRACE_UNWRITTEN		3	/* a GPU signal that wrote no slot */

/* Why fences end with an error (kfdsync_end). */
#define KFDSYNC_END_UNREGISTER		1	/* the owner unregistered the event */
#define KFDSYNC_END_CLOSE		2	/* the owner closed the context or timeline */
#define KFDSYNC_END_EXIT		3	/* the owner's address space went away */
#define KFDSYNC_END_DESTROY		4	/* amdkfd destroyed the event */
#define KFDSYNC_END_FREE		5	/* amdkfd freed the owner's process */
#define KFDSYNC_END_EXCEPTION		6	/* exception, memory fault or poison */
#define KFDSYNC_END_RESET		7	/* a GPU reset */
#define KFDSYNC_END_UNLOAD		8	/* amdgpu went away */
#define KFDSYNC_END_IMPORT		9	/* an import passed its fence's error on */
#define KFDSYNC_END_UNPLUG		10	/* the owner's GPU was unplugged */

/* The kinds of export (kfdsync_export). */
#define KFDSYNC_TRACE_SYNC_FILE		0
#define KFDSYNC_TRACE_EVENTFD		1
#define KFDSYNC_TRACE_CONDITION		2
#define KFDSYNC_TRACE_CONDITION_EVENTFD	3

/* The width of a driver or timeline name, as in struct sync_fence_info. */
#define KFDSYNC_TRACE_NAME_LEN		32

/*
 * A foreign fence's driver and timeline names, as the dma_fence core's own
 * events of this kernel read them: through the ops before 6.17, through
 * the helpers that know a signalled fence's names may be gone after.
 */
static inline void kfdsync_trace_fence_names(struct dma_fence *fence,
					     char *driver, char *timeline)
{
#ifdef KFDSYNC_HAVE_DMA_FENCE_NAMES
	rcu_read_lock();
	strscpy(driver, (const char __force *)dma_fence_driver_name(fence),
		KFDSYNC_TRACE_NAME_LEN);
	strscpy(timeline, (const char __force *)dma_fence_timeline_name(fence),
		KFDSYNC_TRACE_NAME_LEN);
	rcu_read_unlock();
#else
	strscpy(driver, fence->ops->get_driver_name(fence),
		KFDSYNC_TRACE_NAME_LEN);
	strscpy(timeline, fence->ops->get_timeline_name(fence),
		KFDSYNC_TRACE_NAME_LEN);
#endif
}

#endif /* KFDSYNC_TRACE_CONSTS_H */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM kfdsync

#if !defined(KFDSYNC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define KFDSYNC_TRACE_H

#include <linux/tracepoint.h>

#define kfdsync_trace_source(s)					\
	__print_symbolic(s, { KFDSYNC_SOURCE_HOOKS, "hooks" },	\
			 { KFDSYNC_SOURCE_RELAY, "relay" })

/* A registered event, and its dma_fence context. */
TRACE_EVENT(kfdsync_register,
	    TP_PROTO(pid_t tgid, u32 id, u64 context, u32 source),
	    TP_ARGS(tgid, id, context, source),
	    TP_STRUCT__entry(__field(pid_t, tgid)
			     __field(u32, id)
			     __field(u64, context)
			     __field(u32, source)),
	    TP_fast_assign(__entry->tgid = tgid;
			   __entry->id = id;
			   __entry->context = context;
			   __entry->source = source;),
	    TP_printk("tgid=%d id=%u context=%llu source=%s", __entry->tgid,
		      __entry->id, __entry->context,
		      kfdsync_trace_source(__entry->source))
);

/* An event leaves its context: unregistered, or the context closed. */
TRACE_EVENT(kfdsync_unregister,
	    TP_PROTO(pid_t tgid, u32 id, u64 context, u64 age),
	    TP_ARGS(tgid, id, context, age),
	    TP_STRUCT__entry(__field(pid_t, tgid)
			     __field(u32, id)
			     __field(u64, context)
			     __field(u64, age)),
	    TP_fast_assign(__entry->tgid = tgid;
			   __entry->id = id;
			   __entry->context = context;
			   __entry->age = age;),
	    TP_printk("tgid=%d id=%u context=%llu age=%llu", __entry->tgid,
		      __entry->id, __entry->context, __entry->age)
);

/*
 * A fence exported for "the next signal after @age" (or a condition):
 * status 0 pending, 1 born signalled, -errno born with that error.
 */
TRACE_EVENT(kfdsync_export,
	    TP_PROTO(pid_t tgid, u32 id, struct dma_fence *fence, u64 age,
		     bool condition, bool eventfd, bool born),
	    TP_ARGS(tgid, id, fence, age, condition, eventfd, born),
	    TP_STRUCT__entry(__field(pid_t, tgid)
			     __field(u32, id)
			     __field(u64, context)
			     __field(u64, seqno)
			     __field(u64, age)
			     __field(u32, kind)
			     __field(int, status)),
	    TP_fast_assign(__entry->tgid = tgid;
			   __entry->id = id;
			   __entry->context = fence->context;
			   __entry->seqno = fence->seqno;
			   __entry->age = age;
			   __entry->kind = (condition ? KFDSYNC_TRACE_CONDITION : 0) |
					   (eventfd ? KFDSYNC_TRACE_EVENTFD : 0);
			   __entry->status = born ? fence->error ?: 1 : 0;),
	    TP_printk("tgid=%d id=%u context=%llu seqno=%llu kind=%s age=%llu status=%d",
		      __entry->tgid, __entry->id, __entry->context, __entry->seqno,
		      __print_symbolic(__entry->kind,
				       { KFDSYNC_TRACE_SYNC_FILE, "sync_file" },
				       { KFDSYNC_TRACE_EVENTFD, "eventfd" },
				       { KFDSYNC_TRACE_CONDITION, "condition" },
				       { KFDSYNC_TRACE_CONDITION_EVENTFD,
					 "condition_eventfd" }),
		      __entry->age, __entry->status)
);

/*
 * The slot layer counted a signal of event @id's slot: @value is what the
 * GPU wrote (0 for a CPU set); @signals the slot's count since watched.
 */
TRACE_EVENT(kfdsync_slot_signal,
	    TP_PROTO(u32 id, u32 from, u64 value, u64 signals),
	    TP_ARGS(id, from, value, signals),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u32, from)
			     __field(u64, value)
			     __field(u64, signals)),
	    TP_fast_assign(__entry->id = id;
			   __entry->from = from;
			   __entry->value = value;
			   __entry->signals = signals;),
	    TP_printk("id=%u from=%s value=%#llx signals=%llu", __entry->id,
		      __print_symbolic(__entry->from, { KFDSYNC_TRACE_GPU, "gpu" },
				       { KFDSYNC_TRACE_CPU, "cpu" },
				       { KFDSYNC_TRACE_SCAN, "scan" },
				       { KFDSYNC_TRACE_UNWRITTEN, "unwritten" }),
		      __entry->value, __entry->signals)
);

/* A registered event's age advanced by @count (hooks or a relay's report). */
TRACE_EVENT(kfdsync_signal,
	    TP_PROTO(pid_t tgid, u32 id, u64 context, u32 source, u64 count,
		     u64 age),
	    TP_ARGS(tgid, id, context, source, count, age),
	    TP_STRUCT__entry(__field(pid_t, tgid)
			     __field(u32, id)
			     __field(u64, context)
			     __field(u32, source)
			     __field(u64, count)
			     __field(u64, age)),
	    TP_fast_assign(__entry->tgid = tgid;
			   __entry->id = id;
			   __entry->context = context;
			   __entry->source = source;
			   __entry->count = count;
			   __entry->age = age;),
	    TP_printk("tgid=%d id=%u context=%llu source=%s count=%llu age=%llu",
		      __entry->tgid, __entry->id, __entry->context,
		      kfdsync_trace_source(__entry->source), __entry->count,
		      __entry->age)
);

/*
 * A pending fence ends: @status 1 signalled, or -errno; or, @dropped, its
 * last reference was already going when it was to end with @status: it is
 * only taken off its queue, never signalled, and nobody can see it (nor
 * does the event's last_status change).
 */
TRACE_EVENT(kfdsync_fence_end,
	    TP_PROTO(struct dma_fence *fence, int error, bool dropped),
	    TP_ARGS(fence, error, dropped),
	    TP_STRUCT__entry(__field(u64, context)
			     __field(u64, seqno)
			     __field(int, status)
			     __field(bool, dropped)),
	    TP_fast_assign(__entry->context = fence->context;
			   __entry->seqno = fence->seqno;
			   __entry->status = error ?: 1;
			   __entry->dropped = dropped;),
	    TP_printk("context=%llu seqno=%llu status=%d dropped=%d",
		      __entry->context, __entry->seqno, __entry->status,
		      __entry->dropped)
);

/*
 * Fences are about to end with @error because of @cause: those of event
 * @id of process @tgid, or where 0, all those the cause reaches.
 */
TRACE_EVENT(kfdsync_end,
	    TP_PROTO(u32 cause, int error, pid_t tgid, u32 id),
	    TP_ARGS(cause, error, tgid, id),
	    TP_STRUCT__entry(__field(u32, cause)
			     __field(int, error)
			     __field(pid_t, tgid)
			     __field(u32, id)),
	    TP_fast_assign(__entry->cause = cause;
			   __entry->error = error;
			   __entry->tgid = tgid;
			   __entry->id = id;),
	    TP_printk("cause=%s error=%d tgid=%d id=%u",
		      __print_symbolic(__entry->cause,
				       { KFDSYNC_END_UNREGISTER, "unregister" },
				       { KFDSYNC_END_CLOSE, "close" },
				       { KFDSYNC_END_EXIT, "exit" },
				       { KFDSYNC_END_DESTROY, "destroy" },
				       { KFDSYNC_END_FREE, "free" },
				       { KFDSYNC_END_EXCEPTION, "exception" },
				       { KFDSYNC_END_RESET, "reset" },
				       { KFDSYNC_END_UNLOAD, "unload" },
				       { KFDSYNC_END_IMPORT, "import" },
				       { KFDSYNC_END_UNPLUG, "unplug" }),
		      __entry->error, __entry->tgid, __entry->id)
);

/*
 * The watchdog expired @fence (due at @deadline, CLOCK_MONOTONIC ns, seen
 * at @now): it ends with -ETIMEDOUT, with every pending fence of a lower
 * seqno of its context.
 */
TRACE_EVENT(kfdsync_watchdog,
	    TP_PROTO(struct dma_fence *fence, u64 deadline, u64 now),
	    TP_ARGS(fence, deadline, now),
	    TP_STRUCT__entry(__field(u64, context)
			     __field(u64, seqno)
			     __field(u64, deadline)
			     __field(u64, late)),
	    TP_fast_assign(__entry->context = fence->context;
			   __entry->seqno = fence->seqno;
			   __entry->deadline = deadline;
			   __entry->late = now - deadline;),
	    TP_printk("context=%llu seqno=%llu deadline=%llu late_ns=%llu",
		      __entry->context, __entry->seqno, __entry->deadline,
		      __entry->late)
);

#define kfdsync_trace_import_flags(f)					\
	__print_flags(f, "|", { KFDSYNC_IMPORT_MEMORY, "memory" },	\
		      { KFDSYNC_IMPORT_MEMORY32, "memory32" },		\
		      { KFDSYNC_IMPORT_SUB, "sub" },			\
		      { KFDSYNC_IMPORT_SET_EVENT, "set_event" },	\
		      { KFDSYNC_IMPORT_FAIL_EVENT, "fail_event" },	\
		      { KFDSYNC_IMPORT_EVENTFD, "eventfd" })

/* Process @tgid imported @fence: what is done when it ends (@args). */
TRACE_EVENT(kfdsync_import_arm,
	    TP_PROTO(pid_t tgid, struct dma_fence *fence,
		     const struct kfdsync_import *args),
	    TP_ARGS(tgid, fence, args),
	    TP_STRUCT__entry(__field(pid_t, tgid)
			     __field(u64, context)
			     __field(u64, seqno)
			     __array(char, driver, KFDSYNC_TRACE_NAME_LEN)
			     __array(char, timeline, KFDSYNC_TRACE_NAME_LEN)
			     __field(u32, flags)
			     __field(u64, addr)
			     __field(u64, value)
			     __field(u64, error_value)
			     __field(u32, event_id)
			     __field(u32, fail_event_id)),
	    TP_fast_assign(__entry->tgid = tgid;
			   __entry->context = fence->context;
			   __entry->seqno = fence->seqno;
			   kfdsync_trace_fence_names(fence, __entry->driver,
						     __entry->timeline);
			   __entry->flags = args->flags;
			   __entry->addr = args->addr;
			   __entry->value = args->value;
			   __entry->error_value = args->error_value;
			   __entry->event_id = args->event_id;
			   __entry->fail_event_id = args->fail_event_id;),
	    TP_printk("tgid=%d context=%llu seqno=%llu driver=%s timeline=%s target=%s addr=%#llx value=%llu error_value=%llu event=%u fail_event=%u",
		      __entry->tgid, __entry->context, __entry->seqno,
		      __entry->driver, __entry->timeline,
		      kfdsync_trace_import_flags(__entry->flags), __entry->addr,
		      __entry->value, __entry->error_value, __entry->event_id,
		      __entry->fail_event_id)
);

/* An import wrote @value for the end of @fence (the value or error value). */
TRACE_EVENT(kfdsync_import_write,
	    TP_PROTO(struct dma_fence *fence, u64 value),
	    TP_ARGS(fence, value),
	    TP_STRUCT__entry(__field(u64, context)
			     __field(u64, seqno)
			     __field(u64, value)),
	    TP_fast_assign(__entry->context = fence->context;
			   __entry->seqno = fence->seqno;
			   __entry->value = value;),
	    TP_printk("context=%llu seqno=%llu value=%llu", __entry->context,
		      __entry->seqno, __entry->value)
);

/* An import is done: @fence ended with @error (0: signalled). */
TRACE_EVENT(kfdsync_import_done,
	    TP_PROTO(struct dma_fence *fence, int error, u32 flags),
	    TP_ARGS(fence, error, flags),
	    TP_STRUCT__entry(__field(u64, context)
			     __field(u64, seqno)
			     __field(int, status)
			     __field(u32, flags)),
	    TP_fast_assign(__entry->context = fence->context;
			   __entry->seqno = fence->seqno;
			   __entry->status = error ?: 1;
			   __entry->flags = flags;),
	    TP_printk("context=%llu seqno=%llu status=%d target=%s",
		      __entry->context, __entry->seqno, __entry->status,
		      kfdsync_trace_import_flags(__entry->flags))
);

/* An import cancelled before its fence ended: its context closed. */
TRACE_EVENT(kfdsync_import_cancel,
	    TP_PROTO(struct dma_fence *fence),
	    TP_ARGS(fence),
	    TP_STRUCT__entry(__field(u64, context)
			     __field(u64, seqno)),
	    TP_fast_assign(__entry->context = fence->context;
			   __entry->seqno = fence->seqno;),
	    TP_printk("context=%llu seqno=%llu", __entry->context, __entry->seqno)
);

/* Process @tgid opened a CPU timeline, dma_fence context @context. */
TRACE_EVENT(kfdsync_timeline_create,
	    TP_PROTO(pid_t tgid, u64 context),
	    TP_ARGS(tgid, context),
	    TP_STRUCT__entry(__field(pid_t, tgid)
			     __field(u64, context)),
	    TP_fast_assign(__entry->tgid = tgid;
			   __entry->context = context;),
	    TP_printk("tgid=%d context=%llu", __entry->tgid, __entry->context)
);

/* A CPU timeline advances by @inc from @value: its fences up to there end. */
TRACE_EVENT(kfdsync_timeline_inc,
	    TP_PROTO(u64 context, u32 inc, u32 value),
	    TP_ARGS(context, inc, value),
	    TP_STRUCT__entry(__field(u64, context)
			     __field(u32, inc)
			     __field(u32, value)),
	    TP_fast_assign(__entry->context = context;
			   __entry->inc = inc;
			   __entry->value = value + inc;),
	    TP_printk("context=%llu inc=%u value=%u", __entry->context,
		      __entry->inc, __entry->value)
);

#endif /* KFDSYNC_TRACE_H */

/* An out-of-tree module's trace header: found through -I$(src) (Kbuild). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kfdsync_trace
#include <trace/define_trace.h>
