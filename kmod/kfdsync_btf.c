// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kfdsync: a reader of BTF (see kfdsync_btf.h).
 *
 * Every offset, length, id and string is checked against the blob before
 * it is used: the kernel hands kfdsync BTF it has already verified, but the
 * host unit test feeds this file mutated blobs, and a blob that does not
 * parse must give an error, never a read out of bounds.
 *
 * Types are rendered as C text ("struct kfd_process *", "unsigned int",
 * "const struct mm_struct *") exactly as far as a call's type goes, as a
 * kCFI kernel hashes it: integers by their C name (a long is not a long
 * long, a char not a signed char), pointer depth, every qualifier
 * under a pointer (const, volatile, restrict), the names of structures,
 * unions and enums. Typedefs are looked through (u32 and uint32_t are both
 * "unsigned int"), and so are a qualifier of the value itself (a "const
 * u32" argument is passed as an unsigned int) and type tags (__user).
 */

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#define kfdsync_btf_alloc(n)	kvmalloc_array(n, sizeof(u32), GFP_KERNEL)
#define kfdsync_btf_release(p)	kvfree(p)
#endif

#include "kfdsync_btf.h"

/*
 * The header up to the string section, all kfdsync reads: newer headers
 * (and struct btf_header of newer kernels) have more after it.
 */
#define KFDSYNC_BTF_HDR_LEN	(offsetof(struct btf_header, str_len) + sizeof(u32))

/* Deepest chain of typedefs, qualifiers and pointers followed. */
#define KFDSYNC_BTF_DEPTH	16

/* Bytes that follow struct btf_type for @t; 0 and *@ok false if unknown. */
static size_t kfdsync_btf_extra(const struct btf_type *t, bool *ok)
{
	size_t vlen = BTF_INFO_VLEN(t->info);

	*ok = true;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
		return sizeof(u32);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:
		return sizeof(struct btf_decl_tag);
	case BTF_KIND_ENUM64:
		return vlen * sizeof(struct btf_enum64);
	default:
		*ok = false;
		return 0;
	}
}

/* Walk the type section: count the types, and record offsets if @offsets. */
static const char *kfdsync_btf_walk(const struct kfdsync_btf *btf,
				    u32 *offsets, u32 *count)
{
	size_t off = 0;
	u32 n = 0;

	while (off < btf->types_len) {
		const struct btf_type *t;
		size_t extra;
		bool ok;

		if (btf->types_len - off < sizeof(*t))
			return "a type runs past the type section";
		t = (const struct btf_type *)(btf->types + off);
		extra = kfdsync_btf_extra(t, &ok);
		if (!ok)
			return "a type of unknown kind";
		if (btf->types_len - off - sizeof(*t) < extra)
			return "a type runs past the type section";
		if (n >= BTF_MAX_TYPE)
			return "too many types";
		if (offsets)
			offsets[n] = off;
		n++;
		off += sizeof(*t) + extra;
	}
	*count = n;
	return NULL;
}

/**
 * kfdsync_btf_init() - parse a BTF blob
 * @btf: out: the parsed blob
 * @data: the blob, which must stay valid while @btf is used
 * @size: its size in bytes
 * @base: the blob @data continues (split BTF), or NULL
 * @why: out: on error, what is wrong, in words
 *
 * Return: 0, -EINVAL if the blob does not parse, -ENOMEM.
 */
int kfdsync_btf_init(struct kfdsync_btf *btf, const void *data, size_t size,
		     const struct kfdsync_btf *base, const char **why)
{
	const struct btf_header *hdr = data;
	const u8 *bytes = data;
	u32 count;

	memset(btf, 0, sizeof(*btf));
	*why = "shorter than a BTF header";
	if (size < KFDSYNC_BTF_HDR_LEN)
		return -EINVAL;
	*why = "not BTF (magic, version)";
	if (hdr->magic != BTF_MAGIC || hdr->version != BTF_VERSION)
		return -EINVAL;
	*why = "a section lies outside the blob";
	if (hdr->hdr_len < KFDSYNC_BTF_HDR_LEN || hdr->hdr_len > size ||
	    (u64)hdr->type_off + hdr->type_len > size - hdr->hdr_len ||
	    (u64)hdr->str_off + hdr->str_len > size - hdr->hdr_len)
		return -EINVAL;
	btf->types = bytes + hdr->hdr_len + hdr->type_off;
	btf->types_len = hdr->type_len;
	btf->strs = (const char *)bytes + hdr->hdr_len + hdr->str_off;
	btf->strs_len = hdr->str_len;
	*why = "the type section is not aligned";
	if (((unsigned long)btf->types | btf->types_len) % sizeof(u32))
		return -EINVAL;
	*why = "the string section is not NUL terminated";
	if (!btf->strs_len || btf->strs[btf->strs_len - 1])
		return -EINVAL;

	*why = kfdsync_btf_walk(btf, NULL, &count);
	if (*why)
		return -EINVAL;
	btf->base = base;
	btf->first_id = base ? base->first_id + base->nr_types : 1;
	btf->str_start = base ? base->str_start + base->strs_len : 0;
	*why = "too many types";
	if (btf->first_id + (u64)count > BTF_MAX_TYPE + 1 ||
	    btf->str_start + (u64)btf->strs_len > (u32)-1)
		return -EINVAL;
	*why = "out of memory";
	btf->offsets = kfdsync_btf_alloc(count ? count : 1);
	if (!btf->offsets)
		return -ENOMEM;
	kfdsync_btf_walk(btf, btf->offsets, &btf->nr_types);
	*why = NULL;
	return 0;
}

/**
 * kfdsync_btf_fini() - free what kfdsync_btf_init() allocated
 * @btf: the parsed blob
 */
void kfdsync_btf_fini(struct kfdsync_btf *btf)
{
	kfdsync_btf_release(btf->offsets);
	btf->offsets = NULL;
}

/**
 * kfdsync_btf_type() - a type by id, in @btf or its base
 * @btf: the parsed blob
 * @id: the type id
 *
 * Return: the type, or NULL for void (0) and ids that do not exist.
 */
const struct btf_type *kfdsync_btf_type(const struct kfdsync_btf *btf, u32 id)
{
	if (id < btf->first_id)
		return btf->base ? kfdsync_btf_type(btf->base, id) : NULL;
	id -= btf->first_id;
	if (id >= btf->nr_types)
		return NULL;
	return (const struct btf_type *)(btf->types + btf->offsets[id]);
}

/**
 * kfdsync_btf_name() - a string by offset, in @btf or its base
 * @btf: the parsed blob
 * @off: the string offset
 *
 * Return: the string, or NULL if @off is outside the string sections.
 */
const char *kfdsync_btf_name(const struct kfdsync_btf *btf, u32 off)
{
	if (off < btf->str_start)
		return btf->base ? kfdsync_btf_name(btf->base, off) : NULL;
	off -= btf->str_start;
	return off < btf->strs_len ? btf->strs + off : NULL;
}

/**
 * kfdsync_btf_find() - a type of @btf itself (not its base) by kind and name
 * @btf: the parsed blob
 * @kind: BTF_KIND_*
 * @name: the name
 * @count: out: how many types of that kind have that name
 *
 * Return: the id of the first such type, 0 if there is none.
 */
u32 kfdsync_btf_find(const struct kfdsync_btf *btf, unsigned int kind,
		     const char *name, unsigned int *count)
{
	u32 found = 0;
	u32 i;

	*count = 0;
	for (i = 0; i < btf->nr_types; i++) {
		const struct btf_type *t;
		const char *s;

		t = (const struct btf_type *)(btf->types + btf->offsets[i]);
		if (BTF_INFO_KIND(t->info) != kind)
			continue;
		s = kfdsync_btf_name(btf, t->name_off);
		if (!s || strcmp(s, name))
			continue;
		if (!*count)
			found = btf->first_id + i;
		++*count;
	}
	return found;
}

/* Rendered text being built; @len stops growing when the buffer is full. */
struct kfdsync_btf_out {
	char *buf;
	size_t size;
	size_t len;
	bool full;
};

static void kfdsync_btf_put(struct kfdsync_btf_out *out, const char *s)
{
	size_t n = strlen(s);

	if (out->full || n >= out->size - out->len) {
		out->full = true;
		return;
	}
	memcpy(out->buf + out->len, s, n + 1);
	out->len += n;
}

static void kfdsync_btf_put_num(struct kfdsync_btf_out *out, const char *fmt,
				unsigned int n)
{
	char num[16];

	snprintf(num, sizeof(num), fmt, n);
	kfdsync_btf_put(out, num);
}

/*
 * The kernel's spelling of a C integer type GCC's debug info names
 * otherwise ("long long unsigned int": unsigned long long, "_Bool": bool);
 * others as they are (int, unsigned int, char, signed char).
 */
static const char *kfdsync_btf_int_name(const char *name)
{
	static const char *const names[][2] = {
		{ "_Bool", "bool" },
		{ "long long unsigned int", "unsigned long long" },
		{ "long long int", "long long" },
		{ "long unsigned int", "unsigned long" },
		{ "long int", "long" },
		{ "short unsigned int", "unsigned short" },
		{ "short int", "short" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i][0]))
			return names[i][1];
	return name;
}

static int kfdsync_btf_put_type(struct kfdsync_btf_out *out,
				const struct kfdsync_btf *btf, u32 id,
				bool top, unsigned int depth)
{
	const struct btf_type *t = kfdsync_btf_type(btf, id);
	const struct btf_array *array;
	const char *name;
	u32 enc;

	if (!id) {
		kfdsync_btf_put(out, "void");
		return 0;
	}
	if (!t)
		return -EINVAL;
	if (depth > KFDSYNC_BTF_DEPTH) {
		kfdsync_btf_put(out, "?");
		return 0;
	}
	name = kfdsync_btf_name(btf, t->name_off);
	if (!name)
		return -EINVAL;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
		if (!top)
			kfdsync_btf_put(out, BTF_INFO_KIND(t->info) == BTF_KIND_CONST ?
					"const " : BTF_INFO_KIND(t->info) ==
					BTF_KIND_VOLATILE ? "volatile " : "restrict ");
		fallthrough;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_TYPE_TAG:
		return kfdsync_btf_put_type(out, btf, t->type, top, depth + 1);
	case BTF_KIND_INT:
		/* Its C name; one the compiler gave no name gets its shape. */
		enc = *(const u32 *)(t + 1);
		if (*name)
			kfdsync_btf_put(out, kfdsync_btf_int_name(name));
		else
			kfdsync_btf_put_num(out,
					    BTF_INT_ENCODING(enc) & BTF_INT_SIGNED ?
					    "s%u" : "u%u", BTF_INT_BITS(enc));
		return 0;
	case BTF_KIND_PTR:
		if (kfdsync_btf_put_type(out, btf, t->type, false, depth + 1))
			return -EINVAL;
		kfdsync_btf_put(out, out->len && out->buf[out->len - 1] == '*' ?
				"*" : " *");
		return 0;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_FWD:
		kfdsync_btf_put(out, BTF_INFO_KIND(t->info) == BTF_KIND_UNION ||
				(BTF_INFO_KIND(t->info) == BTF_KIND_FWD &&
				 BTF_INFO_KFLAG(t->info)) ? "union " : "struct ");
		kfdsync_btf_put(out, *name ? name : "(anon)");
		return 0;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		kfdsync_btf_put(out, "enum ");
		kfdsync_btf_put(out, *name ? name : "(anon)");
		return 0;
	case BTF_KIND_ARRAY:
		array = (const struct btf_array *)(t + 1);
		if (kfdsync_btf_put_type(out, btf, array->type, false, depth + 1))
			return -EINVAL;
		kfdsync_btf_put_num(out, "[%u]", array->nelems);
		return 0;
	case BTF_KIND_FUNC_PROTO:
		kfdsync_btf_put(out, "fn");
		return 0;
	case BTF_KIND_FLOAT:
		kfdsync_btf_put_num(out, "f%u", t->size * 8);
		return 0;
	default:
		kfdsync_btf_put(out, "?");
		return 0;
	}
}

/**
 * kfdsync_btf_render() - a type as text
 * @btf: the parsed blob
 * @id: the type id (0: void)
 * @buf: out: the text
 * @size: size of @buf
 *
 * Return: 0, -EINVAL if the type or one it refers to does not exist,
 * -E2BIG if the text does not fit.
 */
int kfdsync_btf_render(const struct kfdsync_btf *btf, u32 id, char *buf,
		       size_t size)
{
	struct kfdsync_btf_out out = { .buf = buf, .size = size };

	if (!size)
		return -E2BIG;
	buf[0] = '\0';
	if (kfdsync_btf_put_type(&out, btf, id, true, 0))
		return -EINVAL;
	return out.full ? -E2BIG : 0;
}

/**
 * kfdsync_btf_render_args() - the argument types of a function prototype
 * @btf: the parsed blob
 * @proto: id of a BTF_KIND_FUNC_PROTO
 * @buf: out: the argument types, separated by ", "; "..." for varargs
 * @size: size of @buf
 * @nr_args: out: the number of arguments
 *
 * Return: 0, -EINVAL if @proto is not a prototype or refers to types that
 * do not exist, -E2BIG if the text does not fit.
 */
int kfdsync_btf_render_args(const struct kfdsync_btf *btf, u32 proto,
			    char *buf, size_t size, unsigned int *nr_args)
{
	const struct btf_type *t = kfdsync_btf_type(btf, proto);
	struct kfdsync_btf_out out = { .buf = buf, .size = size };
	const struct btf_param *param;
	unsigned int i;

	if (!size)
		return -E2BIG;
	buf[0] = '\0';
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_FUNC_PROTO)
		return -EINVAL;
	param = (const struct btf_param *)(t + 1);
	*nr_args = BTF_INFO_VLEN(t->info);
	for (i = 0; i < *nr_args; i++) {
		if (i)
			kfdsync_btf_put(&out, ", ");
		if (!param[i].type)
			kfdsync_btf_put(&out, "...");
		else if (kfdsync_btf_put_type(&out, btf, param[i].type, true, 0))
			return -EINVAL;
	}
	return out.full ? -E2BIG : 0;
}
