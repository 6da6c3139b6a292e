// SPDX-License-Identifier: MIT
/*
 * btf_gate: the amdkfd ABI gate (kmod/kfdsync_abi.c, kmod/kfdsync_btf.c,
 * the very files kfdsync.ko builds from) on the host.
 *
 * How this program works: every kernel of the committed fixtures
 * (tests/btf/fixtures/<release>/, the BTF of Debian's packages cut down to
 * what the gate reads by tools/btf-fixtures) and every whole BTF pair
 * given with --real gets the verdict its amdkfd calls for: Debian's 6.1
 * and 6.12 match the ABIs kfdsync implements, 6.16 and later (amdkfd's
 * two-argument process lookup) do not, and the verdict names that first
 * difference. Then the 6.12 fixture is mutated one way at a time (an
 * argument added, a pointer to another structure, another return type,
 * event_id moved, a probed function gone, a name twice, blobs that do not
 * parse): each is refused with its reason. Last, random corruption must
 * never make the walker read out of bounds (run under ASan/UBSan). And
 * IBT: with the real code of Debian's amdgpu.ko (--entries), every
 * function of the ABI is there, and where amdgpu is built with IBT (6.12
 * on) module load seals every one kfdsync calls, which is why kfdsync
 * calls them through static calls.
 *
 *   btf_gate FIXTURES_DIR [--real LABEL=DIR]... [--entries LABEL=FILE]...
 *            [--missing LABEL=REASON]...
 *
 * Output is TAP.
 */

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kfdsync.h>

#include "kfdsync_abi.h"
#include "tap.h"

/* One base + split pair. */
struct pair {
	uint8_t *base;
	size_t base_size;
	uint8_t *split;
	size_t split_size;
};

static uint8_t *slurp(const char *dir, const char *name, size_t *size)
{
	char path[4096];
	uint8_t *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		tap_bail("%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	/* Room for mutations that grow the blob. */
	buf = malloc(n + 64);
	if (!buf || fread(buf, 1, n, f) != (size_t)n)
		tap_bail("%s: short read", path);
	fclose(f);
	*size = n;
	return buf;
}

static void pair_load(struct pair *p, const char *dir)
{
	p->base = slurp(dir, "vmlinux.btf", &p->base_size);
	p->split = slurp(dir, "amdgpu.btf", &p->split_size);
}

static void pair_free(struct pair *p)
{
	free(p->base);
	free(p->split);
}

static void verdict_of(const struct pair *p, struct kfdsync_abi_verdict *v)
{
	kfdsync_abi_check(p->base, p->base_size, p->split, p->split_size, v);
}

static const char *result_name(uint32_t result)
{
	switch (result) {
	case KFDSYNC_AMDKFD_ABI_MATCH:
		return "match";
	case KFDSYNC_AMDKFD_ABI_MISMATCH:
		return "mismatch";
	case KFDSYNC_AMDKFD_ABI_NO_BTF:
		return "no BTF";
	default:
		return "?";
	}
}

static const char *abi_name(const struct kfdsync_abi_verdict *v)
{
	return v->abi >= 0 && v->abi < KFDSYNC_ABI_COUNT ? kfdsync_abis[v->abi].name : "-";
}

/* The ABI named @name, an enum kfdsync_abi_id; -1 if none. */
static int abi_id(const char *name)
{
	int i;

	for (i = 0; i < KFDSYNC_ABI_COUNT; i++)
		if (!strcmp(kfdsync_abis[i].name, name))
			return i;
	return -1;
}

/* Number of functions ABI @abi has. */
static unsigned int abi_nr_fns(int abi)
{
	unsigned int i, n = 0;

	for (i = 0; i < kfdsync_abi_nr_fns; i++)
		n += kfdsync_abi_in(kfdsync_abi_fns[i].abis, abi);
	return n;
}

/* ---- what each kernel's amdkfd calls for ---- */

/*
 * The structure facts alone (kfdsync_abi_check_facts(), also where the
 * functions match no ABI yet): "" when they hold, at the byte offsets
 * @off (as tools/btf-fixtures show prints them from the whole BTF, an
 * independent reader: struct kfd_process's signal_page, struct
 * kfd_signal_page's kernel_address), else the first difference. With a
 * match, the verdict must have read the same offsets.
 */
#define FACTS_7_3 "struct kfd_process: signal_page is unsigned long long *, " \
		  "ABI 7.1 has struct kfd_signal_page *"
/* Not read in that ABI. */
#define NOT_READ 0xffffffffU

static const struct expect {
	const char *prefix;	/* of the kernel release */
	uint32_t result;
	const char *abi;
	const char *reason;
	uint32_t off[KFDSYNC_ABI_OFFSETS];
	const char *facts;
} expects[] = {
	{ "6.1.", KFDSYNC_AMDKFD_ABI_MATCH, "6.1", "", { 408, 0, NOT_READ }, "" },
	{ "6.12.", KFDSYNC_AMDKFD_ABI_MATCH, "6.12", "", { 792, 0, NOT_READ }, "" },
	{ "6.16.", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", { 784, 0, 8 }, "" },
	{ "6.17.", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", { 784, 0, 8 }, "" },
	{ "6.18.", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", { 784, 0, 8 }, "" },
	{ "6.19.", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", { 784, 0, 8 }, "" },
	{ "7.2.", KFDSYNC_AMDKFD_ABI_MATCH, "7.1", "", { 768, 0, 8 }, "" },
	{ "7.3.", KFDSYNC_AMDKFD_ABI_MISMATCH, "7.1", FACTS_7_3, { 0 }, FACTS_7_3 },
};

static const struct expect *expect_of(const char *release)
{
	size_t i;

	for (i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		if (!strncmp(release, expects[i].prefix, strlen(expects[i].prefix)))
			return &expects[i];
	return NULL;
}

/*
 * tools/debug-kernel's 6.1 (linux-source-6.1): Debian 6.1's ABI, with
 * structures laid out by its debug options (lockdep's larger mutexes).
 */
static const struct expect debug_6_1 = {
	"6.1.", KFDSYNC_AMDKFD_ABI_MATCH, "6.1", "", { 736, 0, NOT_READ }, ""
};

static void check_kernel(const char *what, const char *release, const char *dir)
{
	const struct expect *e = strstr(release, "-kfdsync-debug") ? &debug_6_1 :
				 expect_of(release);
	struct kfdsync_abi_verdict v;
	struct pair p;

	if (!e) {
		tap_ok(false, "%s_%s_expected (no expectation for this release: add one)",
		       what, release);
		return;
	}
	pair_load(&p, dir);
	verdict_of(&p, &v);
	tap_ok(v.result == e->result && !strcmp(abi_name(&v), e->abi) &&
	       !strcmp(v.reason, e->reason),
	       "%s_%s_verdict (%s, ABI %s, \"%s\"; want %s, ABI %s, \"%s\")", what, release,
	       result_name(v.result), abi_name(&v), v.reason, result_name(e->result),
	       e->abi, e->reason);
	if (e->result == KFDSYNC_AMDKFD_ABI_MATCH)
		tap_ok(!memcmp(v.off, e->off, sizeof(v.off)),
		       "%s_%s_read_offsets (signal_page at byte %u, kernel_address at %u, "
		       "pdd's process at %d; want %u, %u, %d)",
		       what, release, v.off[KFDSYNC_ABI_OFF_SIGNAL_PAGE],
		       v.off[KFDSYNC_ABI_OFF_KERNEL_ADDRESS], (int)v.off[KFDSYNC_ABI_OFF_PDD_PROCESS],
		       e->off[KFDSYNC_ABI_OFF_SIGNAL_PAGE], e->off[KFDSYNC_ABI_OFF_KERNEL_ADDRESS],
		       (int)e->off[KFDSYNC_ABI_OFF_PDD_PROCESS]);
	kfdsync_abi_check_facts(p.base, p.base_size, p.split, p.split_size, abi_id(e->abi), &v);
	tap_ok(e->facts[0] ? v.result == KFDSYNC_AMDKFD_ABI_MISMATCH && !strcmp(v.reason, e->facts) :
	       v.result == KFDSYNC_AMDKFD_ABI_MATCH && !memcmp(v.off, e->off, sizeof(v.off)),
	       "%s_%s_slot_facts (%s, \"%s\", signal_page at byte %u, kernel_address at %u)",
	       what, release, result_name(v.result), v.reason,
	       v.off[KFDSYNC_ABI_OFF_SIGNAL_PAGE], v.off[KFDSYNC_ABI_OFF_KERNEL_ADDRESS]);
	pair_free(&p);
}

/* Every committed fixture; and every kernel of the table has one. */
static void check_fixtures(const char *fixtures)
{
	bool seen[sizeof(expects) / sizeof(expects[0])] = { false };
	struct dirent **names;
	char dir[4096];
	int n, i;

	n = scandir(fixtures, &names, NULL, alphasort);
	if (n < 0)
		tap_bail("%s: %s", fixtures, strerror(errno));
	for (i = 0; i < n; i++) {
		const struct expect *e = expect_of(names[i]->d_name);

		if (names[i]->d_name[0] != '.' && names[i]->d_type == DT_DIR) {
			snprintf(dir, sizeof(dir), "%s/%s", fixtures, names[i]->d_name);
			check_kernel("fixture", names[i]->d_name, dir);
			if (e)
				seen[e - expects] = true;
		}
		free(names[i]);
	}
	free(names);
	for (i = 0; i < (int)(sizeof(expects) / sizeof(expects[0])); i++)
		tap_ok(seen[i], "fixture_present_%s (tools/btf-fixtures refresh)",
		       expects[i].prefix);
}

/* ---- mutations of one fixture ---- */

struct btf_hdr {
	uint16_t magic;
	uint8_t version, flags;
	uint32_t hdr_len, type_off, type_len, str_off, str_len;
};

static struct btf_hdr *hdr(uint8_t *blob)
{
	return (struct btf_hdr *)blob;
}

/* A parsed view of the (mutable) split blob of @p. */
struct view {
	struct kfdsync_btf base, split;
};

static void view_init(struct view *w, struct pair *p)
{
	const char *why;

	if (kfdsync_btf_init(&w->base, p->base, p->base_size, NULL, &why) ||
	    kfdsync_btf_init(&w->split, p->split, p->split_size, &w->base, &why))
		tap_bail("fixture does not parse: %s", why);
}

static void view_fini(struct view *w)
{
	kfdsync_btf_fini(&w->split);
	kfdsync_btf_fini(&w->base);
}

/* The (writable) type @id of the split blob. */
static struct btf_type *type_of(struct view *w, uint32_t id)
{
	return (struct btf_type *)kfdsync_btf_type(&w->split, id);
}

static struct btf_type *func(struct view *w, const char *name)
{
	unsigned int count;
	uint32_t id = kfdsync_btf_find(&w->split, BTF_KIND_FUNC, name, &count);

	if (count != 1)
		tap_bail("fixture: %u functions %s", count, name);
	return type_of(w, id);
}

static struct btf_type *proto(struct view *w, const char *name)
{
	return type_of(w, func(w, name)->type);
}

/* Mutations: each changes a fresh copy of the 6.12 pair. */
static void add_argument(struct pair *p, struct view *w)
{
	struct btf_type *t = proto(w, "kfd_unref_process");
	struct btf_param *param = (struct btf_param *)(t + 1);
	uint8_t *end = (uint8_t *)(param + BTF_INFO_VLEN(t->info));
	struct btf_param extra = param[0];

	/* Make room for one btf_param; the strings move up by as much. */
	memmove(end + sizeof(extra), end, p->split + p->split_size - end);
	memcpy(end, &extra, sizeof(extra));
	t->info++;
	hdr(p->split)->type_len += sizeof(extra);
	hdr(p->split)->str_off += sizeof(extra);
	p->split_size += sizeof(extra);
}

static void pointer_to_other_struct(struct pair *p, struct view *w)
{
	struct btf_param *param = (struct btf_param *)(proto(w, "set_event_from_interrupt") + 1);

	(void)p;
	param[1].type = param[0].type;
}

static void return_void(struct pair *p, struct view *w)
{
	(void)p;
	proto(w, "kfd_set_event")->type = 0;
}

static void argument_signed(struct pair *p, struct view *w)
{
	struct btf_param *param = (struct btf_param *)(proto(w, "kfd_set_event") + 1);

	/* kfd_set_event's return type is an s32: its id will do. */
	(void)p;
	param[1].type = proto(w, "kfd_set_event")->type;
}

static struct btf_member *event_id(struct view *w)
{
	unsigned int count;
	uint32_t id = kfdsync_btf_find(&w->split, BTF_KIND_STRUCT, "kfd_event", &count);
	struct btf_type *t = type_of(w, id);
	struct btf_member *m = (struct btf_member *)(t + 1);
	unsigned int i;

	for (i = 0; i < BTF_INFO_VLEN(t->info); i++)
		if (!strcmp(kfdsync_btf_name(&w->split, m[i].name_off), "event_id"))
			return &m[i];
	tap_bail("fixture: no kfd_event.event_id");
}

/* Member @member of the (only) struct @name of the split blob. */
static struct btf_member *member(struct view *w, const char *name, const char *member)
{
	unsigned int count, i;
	uint32_t id = kfdsync_btf_find(&w->split, BTF_KIND_STRUCT, name, &count);
	struct btf_type *t = type_of(w, id);
	struct btf_member *m = (struct btf_member *)(t + 1);

	for (i = 0; count == 1 && i < BTF_INFO_VLEN(t->info); i++)
		if (!strcmp(kfdsync_btf_name(&w->split, m[i].name_off), member))
			return &m[i];
	tap_bail("fixture: no struct %s.%s", name, member);
}

static void kernel_address_unaligned(struct pair *p, struct view *w)
{
	(void)p;
	member(w, "kfd_signal_page", "kernel_address")->offset = 32;
}

static void kernel_address_outside(struct pair *p, struct view *w)
{
	(void)p;
	/* struct kfd_signal_page has 24 bytes: the last 8 are a bool and padding. */
	member(w, "kfd_signal_page", "kernel_address")->offset = 24 * 8;
}

static void kernel_address_moved(struct pair *p, struct view *w)
{
	(void)p;
	member(w, "kfd_signal_page", "kernel_address")->offset = 128;
}

static void slot_type_u32(struct pair *p, struct view *w)
{
	/* event_id's type is a u32: a pointer to it will do, if one exists. */
	struct btf_member *ka = member(w, "kfd_signal_page", "kernel_address");
	uint32_t u32_id = member(w, "kfd_event", "event_id")->type;
	struct btf_type *ptr = type_of(w, ka->type);

	(void)p;
	if (!ptr || BTF_INFO_KIND(ptr->info) != BTF_KIND_PTR)
		tap_bail("fixture: kernel_address is not a pointer");
	ptr->type = u32_id;
}

/* The slot's integer named as the other 64-bit one: long vs long long. */
static void slot_type_long(struct pair *p, struct view *w)
{
	struct btf_member *ka = member(w, "kfd_signal_page", "kernel_address");
	struct btf_type *ptr = type_of(w, ka->type);
	struct btf_type *u64 = ptr ? (struct btf_type *)kfdsync_btf_type(&w->split, ptr->type)
				   : NULL;
	char *name;

	(void)p;
	while (u64 && BTF_INFO_KIND(u64->info) == BTF_KIND_TYPEDEF)	/* uint64_t, __u64 */
		u64 = (struct btf_type *)kfdsync_btf_type(&w->split, u64->type);
	name = u64 ? (char *)kfdsync_btf_name(&w->split, u64->name_off) : NULL;
	if (!name || strcmp(name, "long long unsigned int"))
		tap_bail("fixture: kernel_address is not a long long unsigned int *");
	/* "long long unsigned int" -> "long unsigned int" + padding NULs. */
	memmove(name + 5, name + 10, strlen(name + 10) + 1);
}

/* const under a pointer turned volatile: another type for a kCFI call. */
static void const_became_volatile(struct pair *p, struct view *w)
{
	struct btf_param *param = (struct btf_param *)(proto(w, "kfd_lookup_process_by_mm") + 1);
	struct btf_type *ptr = type_of(w, param[0].type);
	struct btf_type *cnst = ptr ? (struct btf_type *)kfdsync_btf_type(&w->split, ptr->type)
				    : NULL;

	(void)p;
	if (!cnst || BTF_INFO_KIND(cnst->info) != BTF_KIND_CONST)
		tap_bail("fixture: kfd_lookup_process_by_mm's argument is not const");
	cnst->info = (cnst->info & ~(0x1fU << 24)) | (BTF_KIND_VOLATILE << 24);
}

static void signal_page_not_a_page(struct pair *p, struct view *w)
{
	(void)p;
	/* set_event()'s argument: a struct kfd_event pointer. */
	member(w, "kfd_process", "signal_page")->type =
		((struct btf_param *)(proto(w, "set_event") + 1))[0].type;
}

static void event_id_moved(struct pair *p, struct view *w)
{
	(void)p;
	event_id(w)->offset = 32;
}

static void event_id_renamed(struct pair *p, struct view *w)
{
	(void)p;
	/* Point its name at another string: the struct's own. */
	event_id(w)->name_off = func(w, "set_event")->name_off;
}

static void probed_function_gone(struct pair *p, struct view *w)
{
	char *name = (char *)kfdsync_btf_name(&w->split, func(w, "set_event")->name_off);

	(void)p;
	name[strlen(name) - 1] = 'X';
}

static void name_twice(struct pair *p, struct view *w)
{
	(void)p;
	func(w, "kfd_signal_hw_exception_event")->name_off = func(w, "kfd_set_event")->name_off;
}

static void type_id_out_of_range(struct pair *p, struct view *w)
{
	struct btf_param *param = (struct btf_param *)(proto(w, "kfd_lookup_process_by_pasid") + 1);

	(void)p;
	param[0].type = 0x7ffff;
}

static void mismatch_then_unparsable(struct pair *p, struct view *w)
{
	struct btf_param *param = (struct btf_param *)(proto(w, "set_event_from_interrupt") + 1);

	/* A difference first (kfd_set_event is checked earlier), then junk. */
	return_void(p, w);
	param[0].type = 0x7ffff;
}

static void truncated(struct pair *p, struct view *w)
{
	(void)w;
	/* Half of the last type's bytes gone; the strings follow as before. */
	hdr(p->split)->type_len -= 4;
}

static void bad_magic(struct pair *p, struct view *w)
{
	(void)w;
	hdr(p->split)->magic = 0x9feb;
}

static void unknown_kind(struct pair *p, struct view *w)
{
	(void)p;
	func(w, "kfd_unref_process")->info |= 0x1fU << 24;
}

static void strings_unterminated(struct pair *p, struct view *w)
{
	(void)w;
	p->split[p->split_size - 1] = 'x';
}

static void section_outside(struct pair *p, struct view *w)
{
	(void)w;
	hdr(p->split)->str_len += 1000;
}

static void base_fewer_types(struct pair *p, struct view *w)
{
	/* The kernel's BTF keeps its first type only: amdgpu's ids move. */
	hdr(p->base)->type_len = w->base.offsets[1];
}

static void newer_header(struct pair *p, struct view *w)
{
	/* 7.x's header: 8 bytes more (a layout section, empty here). */
	uint8_t *after = p->split + hdr(p->split)->hdr_len;

	(void)w;
	memmove(after + 8, after, p->split + p->split_size - after);
	memset(after, 0, 8);
	hdr(p->split)->hdr_len += 8;
	p->split_size += 8;
}

static const struct mutation {
	const char *name;
	void (*fn)(struct pair *p, struct view *w);
	uint32_t result;
	const char *reason;	/* exact, or a prefix ending in ':' */
} mutations[] = {
	{ "newer_header_still_matches", newer_header, KFDSYNC_AMDKFD_ABI_MATCH, "" },
	{ "argument_added", add_argument, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "kfd_unref_process takes 2 arguments, ABI 6.12 has 1" },
	{ "pointer_to_other_struct", pointer_to_other_struct, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "set_event_from_interrupt argument 2 is struct kfd_process *, ABI 6.12 has struct kfd_event *" },
	{ "return_type_changed", return_void, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "kfd_set_event returns void, ABI 6.12 has int" },
	{ "argument_signedness_changed", argument_signed, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "kfd_set_event argument 2 is int, ABI 6.12 has unsigned int" },
	{ "event_id_moved", event_id_moved, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "struct kfd_event: event_id is unsigned int at bit 32, ABI 6.12 has unsigned int at bit 0" },
	{ "event_id_gone", event_id_renamed, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "struct kfd_event has no member event_id, ABI 6.12 has" },
	{ "kernel_address_unaligned", kernel_address_unaligned, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "struct kfd_signal_page: kernel_address at bit 32 is not an aligned member of its 24 bytes" },
	{ "kernel_address_outside_struct", kernel_address_outside, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "struct kfd_signal_page: kernel_address at bit 192 is not an aligned member of its 24 bytes" },
	{ "kernel_address_moved_still_matches", kernel_address_moved, KFDSYNC_AMDKFD_ABI_MATCH, "" },
	{ "slot_type_changed", slot_type_u32, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "struct kfd_signal_page: kernel_address is unsigned int *, ABI 6.12 has unsigned long long *" },
	{ "slot_type_long_not_long_long", slot_type_long, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "struct kfd_signal_page: kernel_address is unsigned long *, ABI 6.12 has unsigned long long *" },
	{ "const_became_volatile", const_became_volatile, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "kfd_lookup_process_by_mm argument 1 is volatile struct mm_struct *, ABI 6.12 has const struct mm_struct *" },
	{ "signal_page_type_changed", signal_page_not_a_page, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "struct kfd_process: signal_page is struct kfd_event *, ABI 6.12 has struct kfd_signal_page *" },
	{ "probed_function_gone", probed_function_gone, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "set_event is not in amdgpu's BTF" },
	{ "function_name_twice", name_twice, KFDSYNC_AMDKFD_ABI_MISMATCH,
	  "kfd_set_event: 2 functions of that name in amdgpu's BTF" },
	{ "type_id_out_of_range", type_id_out_of_range, KFDSYNC_AMDKFD_ABI_NO_BTF,
	  "amdgpu's BTF does not parse: kfd_lookup_process_by_pasid's prototype" },
	{ "mismatch_then_unparsable", mismatch_then_unparsable, KFDSYNC_AMDKFD_ABI_NO_BTF,
	  "amdgpu's BTF does not parse: set_event_from_interrupt's prototype" },
	{ "truncated", truncated, KFDSYNC_AMDKFD_ABI_NO_BTF,
	  "amdgpu's BTF does not parse: a type runs past the type section" },
	{ "bad_magic", bad_magic, KFDSYNC_AMDKFD_ABI_NO_BTF,
	  "amdgpu's BTF does not parse: not BTF (magic, version)" },
	{ "unknown_kind", unknown_kind, KFDSYNC_AMDKFD_ABI_NO_BTF,
	  "amdgpu's BTF does not parse: a type of unknown kind" },
	{ "strings_unterminated", strings_unterminated, KFDSYNC_AMDKFD_ABI_NO_BTF,
	  "amdgpu's BTF does not parse: the string section is not NUL terminated" },
	{ "section_outside_blob", section_outside, KFDSYNC_AMDKFD_ABI_NO_BTF,
	  "amdgpu's BTF does not parse: a section lies outside the blob" },
	{ "base_fewer_types", base_fewer_types, KFDSYNC_AMDKFD_ABI_NO_BTF,
	  "amdgpu's BTF does not parse:" },
};

static void check_mutations(const char *dir)
{
	struct kfdsync_abi_verdict v;
	size_t i;

	for (i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
		const struct mutation *m = &mutations[i];
		struct pair p;
		struct view w;
		bool reason_ok;
		size_t n;

		pair_load(&p, dir);
		view_init(&w, &p);
		m->fn(&p, &w);
		view_fini(&w);
		verdict_of(&p, &v);
		n = strlen(m->reason);
		reason_ok = n && m->reason[n - 1] == ':' ? !strncmp(v.reason, m->reason, n) :
			    !strcmp(v.reason, m->reason);
		tap_ok(v.result == m->result && reason_ok,
		       "mutation_%s (%s, \"%s\"; want %s, \"%s\")", m->name,
		       result_name(v.result), v.reason, result_name(m->result), m->reason);
		/* The gate reads a moved member where it moved to. */
		if (m->fn == kernel_address_moved)
			tap_ok(v.off[KFDSYNC_ABI_OFF_KERNEL_ADDRESS] == 16,
			       "mutation_kernel_address_moved_read_there (byte %u, want 16)",
			       v.off[KFDSYNC_ABI_OFF_KERNEL_ADDRESS]);
		pair_free(&p);
	}
}

/* The 6.12 driver over the 6.1 kernel's BTF: ids and strings mean other things. */
static void check_wrong_base(const char *dir61, const char *dir612)
{
	struct kfdsync_abi_verdict v;
	struct pair a, b, mixed;

	pair_load(&a, dir61);
	pair_load(&b, dir612);
	mixed = (struct pair){ a.base, a.base_size, b.split, b.split_size };
	verdict_of(&mixed, &v);
	tap_ok(v.result != KFDSYNC_AMDKFD_ABI_MATCH, "wrong_base_never_matches (%s, \"%s\")",
	       result_name(v.result), v.reason);
	pair_free(&a);
	pair_free(&b);
}

/* Random corruption: never a crash or an out-of-bounds read (ASan). */
static void check_corruption(const char *dir)
{
	unsigned int i, results[4] = { 0 };
	struct kfdsync_abi_verdict v;
	struct pair p, orig;

	pair_load(&orig, dir);
	srand(1);
	for (i = 0; i < 5000; i++) {
		unsigned int flips = 1 + rand() % 4, j;

		p = orig;
		p.split = malloc(orig.split_size);
		memcpy(p.split, orig.split, orig.split_size);
		for (j = 0; j < flips; j++)
			p.split[rand() % p.split_size] ^= 1U << (rand() % 8);
		verdict_of(&p, &v);
		results[v.result < 4 ? v.result : 0]++;
		free(p.split);
	}
	tap_ok(!results[KFDSYNC_AMDKFD_ABI_UNCHECKED],
	       "corruption_5000_blobs_judged (%u match, %u mismatch, %u no BTF)",
	       results[KFDSYNC_AMDKFD_ABI_MATCH], results[KFDSYNC_AMDKFD_ABI_MISMATCH],
	       results[KFDSYNC_AMDKFD_ABI_NO_BTF]);
	pair_free(&orig);
}

/*
 * IBT on the real amdgpu.ko of @label: @file has a line per function the
 * gate checks, "name insn state" (tools/btf-fixtures entries: its first
 * four code bytes, and whether module load seals its ENDBR64: "sealed",
 * "kept", or "none" without one; 6.12's and later are built with
 * CONFIG_X86_KERNEL_IBT, 6.1's is not). kfdsync finds each whatever its
 * code starts with and calls amdkfd through static calls only (direct
 * branches, which IBT does not check), so no state keeps the hooks off.
 * What the docs say of Debian's amdgpu is checked here: built with IBT,
 * it seals the entry of every function kfdsync calls (an indirect call
 * there would fault on an IBT CPU); built without, there is nothing to
 * seal.
 */
static void check_entries(const char *label, const char *file)
{
	const struct expect *e = expect_of(label);
	int abi = e ? abi_id(e->abi) : -1;
	char name[128], state[16], no_endbr[1024] = "", sealed[1024] = "";
	unsigned int insn, n = 0, called = 0, called_sealed = 0, endbr = 0;
	FILE *f = fopen(file, "r");

	if (abi < 0)
		tap_bail("%s: no ABI expected for this release", label);
	if (!f || !fgets(name, sizeof(name), f))
		tap_bail("%s: cannot read", file);
	while (fscanf(f, "%127s %x %15s", name, &insn, state) == 3) {
		const struct kfdsync_abi_fn *fn = kfdsync_abi_fn(abi, name);
		bool is_sealed = !strcmp(state, "sealed");

		if (!fn)
			continue;
		n++;
		endbr += insn == KFDSYNC_ABI_ENDBR64;
		if (insn != KFDSYNC_ABI_ENDBR64)
			snprintf(no_endbr + strlen(no_endbr), sizeof(no_endbr) - strlen(no_endbr),
				 " %s", name);
		if (fn->probed)
			continue;
		called++;
		if (is_sealed) {
			called_sealed++;
			snprintf(sealed + strlen(sealed), sizeof(sealed) - strlen(sealed),
				 " %s", name);
		}
	}
	fclose(f);
	tap_ok(n == abi_nr_fns(abi), "ibt_%s_every_function_read (%u of %u)", label, n,
	       abi_nr_fns(abi));
	/* Built with IBT, every global function starts with ENDBR64. */
	if (endbr)
		tap_ok(called && called_sealed == called,
		       "ibt_%s_called_functions_sealed (%u of %u: static calls reach them)",
		       label, called_sealed, called);
	else
		tap_ok(!called_sealed, "ibt_%s_no_ibt_nothing_sealed", label);
	printf("# %s: no ENDBR64:%s\n", label, no_endbr[0] ? no_endbr : " none");
	printf("# %s: called, sealed at load:%s\n", label, sealed[0] ? sealed : " none");
}

/*
 * ABI 7.1's interrupt hook: which kfd_signal_event_interrupt() calls set an
 * event with no slot write (7.2's kfd_events.c:171-178; the callers pass
 * 32 valid bits from the CP, 28 from SDMA, fewer on older chips).
 */
static void check_unwritten(void)
{
	static const struct {
		uint32_t id, bits;
		bool updated, unwritten;
	} cases[] = {
		{ 5, 32, false, true },		/* gfx 12.1's end of pipe */
		{ 5, 32, true, false },		/* every other caller: the slot says */
		{ 5, 28, false, true },		/* 1 << 28 >= 4096: a full id */
		{ 5, 12, false, true },		/* 1 << 12 == 4096: still full */
		{ 5, 11, false, false },	/* a partial id: slots are read */
		{ 5, 0, false, false },		/* no id: amdkfd scans the slots */
		{ 4095, 32, false, true },
		{ 4096, 32, false, false },	/* beyond the page: amdkfd drops it */
		{ 0xffffffffU, 32, false, false },
		{ 5, 33, false, true },		/* more bits than an id has */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_ok(kfdsync_abi_signal_unwritten(cases[i].id, cases[i].bits, cases[i].updated) ==
		       cases[i].unwritten, "unwritten_id_%u_bits_%u_%s_%s", cases[i].id,
		       cases[i].bits, cases[i].updated ? "updated" : "not_updated",
		       cases[i].unwritten ? "counted" : "not_counted");
}

/* The fixture directory of the kernel whose release starts with @prefix. */
static bool fixture_dir(const char *fixtures, const char *prefix, char *dir, size_t size)
{
	struct dirent *d;
	bool found = false;
	DIR *dp = opendir(fixtures);

	while (dp && !found && (d = readdir(dp))) {
		if (!strncmp(d->d_name, prefix, strlen(prefix))) {
			snprintf(dir, size, "%s/%s", fixtures, d->d_name);
			found = true;
		}
	}
	if (dp)
		closedir(dp);
	return found;
}

int main(int argc, char **argv)
{
	char dir61[4096], dir612[4096];
	int i;

	if (argc < 2)
		tap_bail("usage: btf_gate FIXTURES_DIR [--real LABEL=DIR]... "
			 "[--missing LABEL=REASON]...");
	printf("TAP version 13\n");
	check_fixtures(argv[1]);
	for (i = 2; i + 1 < argc; i += 2) {
		char *eq = strchr(argv[i + 1], '=');

		if (!eq)
			tap_bail("bad argument %s", argv[i + 1]);
		*eq = '\0';
		if (!strcmp(argv[i], "--real"))
			check_kernel("real", argv[i + 1], eq + 1);
		else if (!strcmp(argv[i], "--entries"))
			check_entries(argv[i + 1], eq + 1);
		else
			tap_skip(eq + 1, "real_%s_verdict", argv[i + 1]);
	}
	if (!fixture_dir(argv[1], "6.1.", dir61, sizeof(dir61)) ||
	    !fixture_dir(argv[1], "6.12.", dir612, sizeof(dir612)))
		tap_bail("no 6.1 or 6.12 fixture in %s", argv[1]);
	check_mutations(dir612);
	check_wrong_base(dir61, dir612);
	check_corruption(dir612);
	check_unwritten();
	printf("1..%u\n", tap_count);
	return tap_failed ? 1 : 0;
}
