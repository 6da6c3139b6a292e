// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kfdsync: the gate - which amdkfd ABI an amdgpu.ko's BTF has (see
 * kfdsync_abi.h).
 *
 * Every function of an ABI must be in the module's BTF exactly once with
 * exactly the listed prototype (argument count, each argument's and the
 * return value's kind and size, the names of the structures pointed to),
 * and every structure fact must hold. A blob matching no ABI is judged
 * against the closest one (the one with fewest items differing; the newer
 * on a tie), and the verdict names its first difference, in the order the
 * lists give: what kfdsync calls before what it probes.
 *
 * The ABIs themselves are in kfdsync_abi_list.h. Builds into kfdsync.ko
 * and into the host unit test (tests/btf).
 */

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#endif

#include <linux/kfdsync.h>

#include "kfdsync_abi.h"

/* The tables below, from the lines of kfdsync_abi_list.h. */
const struct kfdsync_abi kfdsync_abis[KFDSYNC_ABI_COUNT] = {
#define KFDSYNC_ABI(id, abi_name) \
	[KFDSYNC_ABI_ID_##id] = { .name = abi_name },
#include "kfdsync_abi_list.h"
};

const struct kfdsync_abi_fn kfdsync_abi_fns[] = {
#define KFDSYNC_CALL(set, member, f, r, ...) \
	{ .name = #f, .ret = #r, .args = #__VA_ARGS__, .abis = set },
#define KFDSYNC_PROBE(set, f, r, ...) \
	{ .name = #f, .ret = #r, .args = #__VA_ARGS__, .probed = true, \
	  .abis = set },
#include "kfdsync_abi_list.h"
};

const unsigned int kfdsync_abi_nr_fns = ARRAY_SIZE(kfdsync_abi_fns);

const struct kfdsync_abi_field kfdsync_abi_fields[] = {
#define KFDSYNC_FIELD(set, st, mem, ty, off) \
	{ .type = #st, .member = #mem, .mtype = #ty, .bit = off, .read = -1, \
	  .abis = set },
#define KFDSYNC_FIELD_READ(set, st, mem, ty, name) \
	{ .type = #st, .member = #mem, .mtype = #ty, \
	  .read = KFDSYNC_ABI_OFF_##name, .abis = set },
#include "kfdsync_abi_list.h"
};

const unsigned int kfdsync_abi_nr_fields = ARRAY_SIZE(kfdsync_abi_fields);

/*
 * What is being checked, where the first difference goes, the number of
 * items of the ABI checked, and the offsets of the members kfdsync reads
 * (U32_MAX: not found yet).
 */
struct kfdsync_abi_ctx {
	const struct kfdsync_btf *btf;
	int abi;	/* enum kfdsync_abi_id */
	char *reason;
	size_t len;
	unsigned int items;
	u32 off[KFDSYNC_ABI_OFFSETS];
};

/* Say what differs (cut to fit: the reason is for people). */
static void kfdsync_abi_say(struct kfdsync_abi_ctx *c, const char *fmt, ...)
	__printf(2, 3);

static void kfdsync_abi_say(struct kfdsync_abi_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, c->len, fmt, ap);
	va_end(ap);
}

/* Number of arguments in a ", "-separated list. */
static unsigned int kfdsync_abi_count(const char *args)
{
	unsigned int n = *args ? 1 : 0;

	while ((args = strstr(args, ", "))) {
		n++;
		args += 2;
	}
	return n;
}

/* Argument @i of a ", "-separated list, into @buf. */
static void kfdsync_abi_arg(const char *args, unsigned int i, char *buf,
			    size_t size)
{
	const char *end;
	size_t n;

	while (i-- && (args = strstr(args, ", ")))
		args += 2;
	if (!args) {
		buf[0] = '\0';
		return;
	}
	end = strstr(args, ", ");
	n = end ? (size_t)(end - args) : strlen(args);
	if (n >= size)
		n = size - 1;
	memcpy(buf, args, n);
	buf[n] = '\0';
}

/*
 * Check one function: 0 if it matches, 1 if not (the difference in the
 * reason), -EINVAL if the BTF does not parse (the reason says where).
 */
static int kfdsync_abi_check_fn(struct kfdsync_abi_ctx *c,
				const struct kfdsync_abi_fn *fn)
{
	char ret[KFDSYNC_BTF_TYPE_LEN], args[4 * KFDSYNC_BTF_TYPE_LEN];
	char got[KFDSYNC_BTF_TYPE_LEN], want[KFDSYNC_BTF_TYPE_LEN];
	unsigned int count, nr, want_nr, i;
	const struct btf_type *t;
	int err;
	u32 id;

	id = kfdsync_btf_find(c->btf, BTF_KIND_FUNC, fn->name, &count);
	if (!count) {
		kfdsync_abi_say(c, "%s is not in amdgpu's BTF",
				fn->name);
		return 1;
	}
	if (count > 1) {
		kfdsync_abi_say(c,
				"%s: %u functions of that name in amdgpu's BTF",
				fn->name, count);
		return 1;
	}
	t = kfdsync_btf_type(c->btf, kfdsync_btf_type(c->btf, id)->type);
	err = -EINVAL;
	if (t && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC_PROTO)
		err = kfdsync_btf_render(c->btf, t->type, ret, sizeof(ret));
	if (!err)
		err = kfdsync_btf_render_args(c->btf,
					      kfdsync_btf_type(c->btf, id)->type,
					      args, sizeof(args), &nr);
	if (err == -EINVAL) {
		kfdsync_abi_say(c,
				"amdgpu's BTF does not parse: %s's prototype",
				fn->name);
		return -EINVAL;
	}
	if (err) {
		kfdsync_abi_say(c,
				"%s's prototype is longer than kfdsync reads",
				fn->name);
		return 1;
	}
	want_nr = kfdsync_abi_count(fn->args);
	if (nr != want_nr) {
		kfdsync_abi_say(c,
				"%s takes %u argument%s, ABI %s has %u", fn->name, nr,
				nr == 1 ? "" : "s", kfdsync_abis[c->abi].name, want_nr);
		return 1;
	}
	if (strcmp(ret, fn->ret)) {
		kfdsync_abi_say(c, "%s returns %s, ABI %s has %s",
				fn->name, ret, kfdsync_abis[c->abi].name, fn->ret);
		return 1;
	}
	for (i = 0; i < nr; i++) {
		kfdsync_abi_arg(args, i, got, sizeof(got));
		kfdsync_abi_arg(fn->args, i, want, sizeof(want));
		if (strcmp(got, want)) {
			kfdsync_abi_say(c,
					"%s argument %u is %s, ABI %s has %s",
					fn->name, i + 1, got, kfdsync_abis[c->abi].name, want);
			return 1;
		}
	}
	return 0;
}

/*
 * A member kfdsync reads where the BTF says (@f->read): its type, and an
 * offset aligned for it (a pointer's: 8 bytes; anything else a byte),
 * inside the structure @t and the same in every definition; as
 * kfdsync_abi_check_fn().
 */
static int kfdsync_abi_check_read(struct kfdsync_abi_ctx *c,
				  const struct btf_type *t,
				  const struct kfdsync_abi_field *f,
				  const char *got, u32 bit, bool bitfield)
{
	size_t len = strlen(f->mtype);
	u32 align = len && f->mtype[len - 1] == '*' ? 64 : 8;
	u32 *off = &c->off[f->read];

	if (bitfield || strcmp(got, f->mtype)) {
		kfdsync_abi_say(c, "struct %s: %s is %s%s, ABI %s has %s",
				f->type, f->member, got,
				bitfield ? " (bit field)" : "", kfdsync_abis[c->abi].name,
				f->mtype);
		return 1;
	}
	if (bit % align || (u64)bit / 8 + align / 8 > t->size) {
		kfdsync_abi_say(c,
				"struct %s: %s at bit %u is not an aligned member of its %u bytes",
				f->type, f->member, bit, t->size);
		return 1;
	}
	if (*off != U32_MAX && *off != bit / 8) {
		kfdsync_abi_say(c,
				"struct %s: %s at byte %u and at byte %u in two definitions",
				f->type, f->member, *off, bit / 8);
		return 1;
	}
	*off = bit / 8;
	return 0;
}

/* One definition of a structure: as kfdsync_abi_check_fn(). */
static int kfdsync_abi_check_struct(struct kfdsync_abi_ctx *c,
				    const struct kfdsync_btf *btf, u32 id,
				    const struct kfdsync_abi_field *f)
{
	const struct btf_type *t = kfdsync_btf_type(btf, id);
	const struct btf_member *m = (const struct btf_member *)(t + 1);
	char got[KFDSYNC_BTF_TYPE_LEN];
	bool bitfield;
	unsigned int i;
	u32 bit;

	for (i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		const char *name = kfdsync_btf_name(btf, m[i].name_off);

		if (!name) {
			kfdsync_abi_say(c,
					"amdgpu's BTF does not parse: struct %s",
					f->type);
			return -EINVAL;
		}
		if (strcmp(name, f->member))
			continue;
		if (kfdsync_btf_render(btf, m[i].type, got, sizeof(got)) ==
		    -EINVAL) {
			kfdsync_abi_say(c,
					"amdgpu's BTF does not parse: struct %s",
					f->type);
			return -EINVAL;
		}
		bit = BTF_INFO_KFLAG(t->info) ?
		      BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;
		bitfield = BTF_INFO_KFLAG(t->info) &&
			   BTF_MEMBER_BITFIELD_SIZE(m[i].offset);
		if (f->read >= 0)
			return kfdsync_abi_check_read(c, t, f, got, bit,
						      bitfield);
		if (bitfield || strcmp(got, f->mtype) || bit != f->bit) {
			kfdsync_abi_say(c,
					"struct %s: %s is %s%s at bit %u, ABI %s has %s at bit %u",
					f->type, f->member, got,
					bitfield ? " (bit field)" : "", bit,
					kfdsync_abis[c->abi].name, f->mtype, f->bit);
			return 1;
		}
		return 0;
	}
	kfdsync_abi_say(c, "struct %s has no member %s, ABI %s has",
			f->type, f->member, kfdsync_abis[c->abi].name);
	return 1;
}

/* A structure fact, for every definition of the structure in the BTF. */
static int kfdsync_abi_check_field(struct kfdsync_abi_ctx *c,
				   const struct kfdsync_abi_field *f)
{
	const struct kfdsync_btf *btf;
	unsigned int count = 0;
	int ret;
	u32 id;

	/* amdgpu's own structures are in its BTF, a kernel one in the base. */
	for (btf = c->btf; btf && !count; btf = btf->base) {
		id = kfdsync_btf_find(btf, BTF_KIND_STRUCT, f->type, &count);
		for (; count && id < btf->first_id + btf->nr_types; id++) {
			const struct btf_type *t = kfdsync_btf_type(btf, id);
			const char *name = kfdsync_btf_name(btf, t->name_off);

			if (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT ||
			    !name || strcmp(name, f->type))
				continue;
			ret = kfdsync_abi_check_struct(c, btf, id, f);
			if (ret)
				return ret;
		}
	}
	if (!count) {
		kfdsync_abi_say(c, "struct %s is not in amdgpu's BTF",
				f->type);
		return 1;
	}
	return 0;
}

/*
 * Check every item of @abi: the number of items that match, or -EINVAL if
 * the BTF does not parse. The first difference is in c->reason.
 */
static int kfdsync_abi_score(struct kfdsync_abi_ctx *c)
{
	const struct kfdsync_abi_field *f;
	char other[KFDSYNC_ABI_REASON];
	int ret, score = 0;
	char *first = c->reason;
	unsigned int i;

	memset(c->off, 0xff, sizeof(c->off));
	c->items = 0;
	for (i = 0; i < kfdsync_abi_nr_fns + kfdsync_abi_nr_fields; i++) {
		if (i < kfdsync_abi_nr_fns) {
			if (!kfdsync_abi_in(kfdsync_abi_fns[i].abis, c->abi))
				continue;
			ret = kfdsync_abi_check_fn(c, &kfdsync_abi_fns[i]);
		} else {
			f = &kfdsync_abi_fields[i - kfdsync_abi_nr_fns];
			if (!kfdsync_abi_in(f->abis, c->abi))
				continue;
			ret = kfdsync_abi_check_field(c, f);
		}
		c->items++;
		if (ret < 0) {
			/* The parse error is the reason, not an earlier mismatch. */
			if (c->reason != first)
				memcpy(first, c->reason, c->len);
			c->reason = first;
			return ret;
		}
		if (!ret)
			score++;
		/* Keep the first difference: later ones go elsewhere. */
		else if (c->reason == first)
			c->reason = other;
	}
	c->reason = first;
	return score;
}

/**
 * kfdsync_abi_fn() - a function of an ABI, by name
 * @abi: the ABI, an enum kfdsync_abi_id
 * @name: the function
 *
 * Return: its entry, or NULL if @abi has no function @name.
 */
const struct kfdsync_abi_fn *kfdsync_abi_fn(int abi, const char *name)
{
	unsigned int i;

	for (i = 0; i < kfdsync_abi_nr_fns; i++)
		if (kfdsync_abi_in(kfdsync_abi_fns[i].abis, abi) &&
		    !strcmp(kfdsync_abi_fns[i].name, name))
			return &kfdsync_abi_fns[i];
	return NULL;
}

/**
 * kfdsync_abi_signal_unwritten() - does an interrupt signal with no write?
 * @id: kfd_signal_event_interrupt()'s partial_id
 * @valid_id_bits: its valid_id_bits
 * @mailbox_updated: its signal_mailbox_updated (ABI 7.1)
 *
 * amdkfd then sets event @id without reading its slot: only for a full id
 * (7.2's kfd_events.c:171-178). A partial id is always looked up by its
 * slots, and an id of 0 valid bits not at all.
 *
 * Return: true if amdkfd sets event @id (if it exists) with no slot write.
 */
bool kfdsync_abi_signal_unwritten(u32 id, u32 valid_id_bits,
				  bool mailbox_updated)
{
	if (mailbox_updated || id >= KFDSYNC_EVENT_ID_LIMIT)
		return false;
	return valid_id_bits > 31 ||
	       (1U << valid_id_bits) >= KFDSYNC_EVENT_ID_LIMIT;
}

/*
 * Parse @vmlinux and @module (split over it) into @base and @split, and
 * start @verdict as NO_BTF; 0, or -EINVAL with the reason in @verdict
 * (nothing to free then).
 */
static int kfdsync_abi_open(const void *vmlinux, size_t vmlinux_size,
			    const void *module, size_t module_size,
			    struct kfdsync_btf *base, struct kfdsync_btf *split,
			    struct kfdsync_abi_verdict *verdict)
{
	const char *why;

	memset(verdict, 0, sizeof(*verdict));
	verdict->abi = -1;
	verdict->result = KFDSYNC_AMDKFD_ABI_NO_BTF;
	if (kfdsync_btf_init(base, vmlinux, vmlinux_size, NULL, &why)) {
		snprintf(verdict->reason, sizeof(verdict->reason),
			 "the kernel's BTF does not parse: %s", why);
		return -EINVAL;
	}
	if (kfdsync_btf_init(split, module, module_size, base, &why)) {
		snprintf(verdict->reason, sizeof(verdict->reason),
			 "amdgpu's BTF does not parse: %s", why);
		kfdsync_btf_fini(base);
		return -EINVAL;
	}
	return 0;
}

/**
 * kfdsync_abi_check() - the gate: which ABI a module's BTF has
 * @vmlinux: the kernel's BTF (/sys/kernel/btf/vmlinux)
 * @vmlinux_size: its size
 * @module: amdgpu's BTF (/sys/kernel/btf/amdgpu), split over @vmlinux
 * @module_size: its size
 * @verdict: out: the verdict (result KFDSYNC_AMDKFD_ABI_*)
 *
 * Reads only the blobs, which must not change meanwhile.
 */
void kfdsync_abi_check(const void *vmlinux, size_t vmlinux_size,
		       const void *module, size_t module_size,
		       struct kfdsync_abi_verdict *verdict)
{
	struct kfdsync_abi_ctx c = { .len = sizeof(verdict->reason) };
	char reason[KFDSYNC_ABI_REASON];
	struct kfdsync_btf base, split;
	u32 best = U32_MAX;
	int score, i;

	if (kfdsync_abi_open(vmlinux, vmlinux_size, module, module_size,
			     &base, &split, verdict))
		return;

	c.btf = &split;
	for (i = 0; i < KFDSYNC_ABI_COUNT; i++) {
		c.abi = i;
		c.reason = reason;
		reason[0] = '\0';
		score = kfdsync_abi_score(&c);
		if (score < 0) {
			verdict->abi = -1;
			memcpy(verdict->reason, reason, sizeof(reason));
			goto out_split;
		}
		/* The closest: fewest differences, the newer on a tie. */
		if (c.items - score <= best) {
			best = c.items - score;
			verdict->abi = i;
			memcpy(verdict->reason, reason, sizeof(reason));
		}
		if ((unsigned int)score == c.items) {
			verdict->result = KFDSYNC_AMDKFD_ABI_MATCH;
			verdict->reason[0] = '\0';
			memcpy(verdict->off, c.off, sizeof(verdict->off));
			goto out_split;
		}
	}
	verdict->result = KFDSYNC_AMDKFD_ABI_MISMATCH;
out_split:
	kfdsync_btf_fini(&split);
	kfdsync_btf_fini(&base);
}

#ifndef __KERNEL__
/**
 * kfdsync_abi_check_facts() - the structure facts of one ABI alone
 * @vmlinux: the kernel's BTF
 * @vmlinux_size: its size
 * @module: amdgpu's BTF, split over @vmlinux
 * @module_size: its size
 * @abi: an enum kfdsync_abi_id
 * @verdict: out: MATCH (with the offsets read) or MISMATCH (the first
 *	     difference), as kfdsync_abi_check() would judge them
 *
 * For the host test: kernels whose functions match no ABI yet (6.16 and
 * later) still show what the gate reads of their structures.
 */
void kfdsync_abi_check_facts(const void *vmlinux, size_t vmlinux_size,
			     const void *module, size_t module_size, int abi,
			     struct kfdsync_abi_verdict *verdict)
{
	struct kfdsync_abi_ctx c = { .len = sizeof(verdict->reason) };
	struct kfdsync_btf base, split;
	unsigned int i;
	int ret = 0;

	if (kfdsync_abi_open(vmlinux, vmlinux_size, module, module_size,
			     &base, &split, verdict))
		return;
	c.btf = &split;
	c.abi = abi;
	c.reason = verdict->reason;
	memset(c.off, 0xff, sizeof(c.off));
	verdict->abi = abi;
	for (i = 0; !ret && i < kfdsync_abi_nr_fields; i++)
		if (kfdsync_abi_in(kfdsync_abi_fields[i].abis, abi))
			ret = kfdsync_abi_check_field(&c, &kfdsync_abi_fields[i]);
	verdict->result = ret < 0 ? KFDSYNC_AMDKFD_ABI_NO_BTF :
			  ret ? KFDSYNC_AMDKFD_ABI_MISMATCH :
			  KFDSYNC_AMDKFD_ABI_MATCH;
	if (!ret)
		memcpy(verdict->off, c.off, sizeof(verdict->off));
	kfdsync_btf_fini(&split);
	kfdsync_btf_fini(&base);
}
#endif
