// SPDX-License-Identifier: MIT
/*
 * kfdsync list: live contexts, events and timelines, from the "kfdsync-"
 * keys of /proc/PID/fdinfo/FD (the module's stable interface, documented in
 * its uAPI headers) of every file descriptor that is /dev/kfdsync or
 * /dev/kfdsync_timeline. procfs decides what the caller sees: its own
 * processes, or every process for root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"

#define MAX_COLS 16
#define VAL_SIZE 128
#define FDINFO_MAX (1 << 20)	/* 4095 event lines are about 400 KiB */

/* A column: its name and where its value comes from. */
enum col_src { SRC_KEY, SRC_TGID, SRC_COMM, SRC_CTX, SRC_EVENT_ID, SRC_FIELD };

struct col {
	const char *name;
	enum col_src src;
	const char *key;	/* fdinfo key (SRC_KEY) or event field (SRC_FIELD) */
	bool text;		/* --json: a string (the rest are decimal numbers) */
};

enum { T_CONTEXTS, T_EVENTS, T_TIMELINES, NTABLES };

static const struct col cols_contexts[] = {
	{ "id", SRC_KEY, "kfdsync-context", false },
	{ "tgid", SRC_TGID, NULL, false },
	{ "comm", SRC_COMM, NULL, true },
	{ "source", SRC_KEY, "kfdsync-source", true },
	{ "events", SRC_KEY, "kfdsync-events", false },
	{ "pending", SRC_KEY, "kfdsync-pending", false },
	{ "max_events", SRC_KEY, "kfdsync-max-events", false },
	{ "max_fences", SRC_KEY, "kfdsync-max-fences", false },
	{ "watchdog_ms", SRC_KEY, "kfdsync-watchdog-ms", false },
	{ "watchdog_max_ms", SRC_KEY, "kfdsync-watchdog-max-ms", false },
	{ "imports", SRC_KEY, "kfdsync-imports", false },
	{ "max_imports", SRC_KEY, "kfdsync-max-imports", false },
	{ "uid", SRC_KEY, "kfdsync-uid", false },
	{ NULL }
};

static const struct col cols_events[] = {
	{ "ctx", SRC_CTX, NULL, false },
	{ "tgid", SRC_TGID, NULL, false },
	{ "source", SRC_FIELD, "source", true },
	{ "id", SRC_EVENT_ID, NULL, false },
	{ "age", SRC_FIELD, "age", false },
	{ "slot", SRC_FIELD, "slot", true },
	{ "pending", SRC_FIELD, "pending", false },
	{ "error", SRC_FIELD, "error", false },
	{ "last", SRC_FIELD, "last", false },
	{ NULL }
};

static const struct col cols_timelines[] = {
	{ "id", SRC_KEY, "kfdsync-timeline", false },
	{ "tgid", SRC_TGID, NULL, false },
	{ "comm", SRC_COMM, NULL, true },
	{ "context", SRC_KEY, "kfdsync-fence-context", false },
	{ "value", SRC_KEY, "kfdsync-value", false },
	{ "pending", SRC_KEY, "kfdsync-pending", false },
	{ "max_fences", SRC_KEY, "kfdsync-max-fences", false },
	{ "watchdog_ms", SRC_KEY, "kfdsync-watchdog-ms", false },
	{ "name", SRC_KEY, "kfdsync-name", true },
	{ NULL }
};

static const char *const table_names[NTABLES] = { "contexts", "events", "timelines" };
static const struct col *const table_cols[NTABLES] = {
	cols_contexts, cols_events, cols_timelines
};

struct row {
	char v[MAX_COLS][VAL_SIZE];
	bool owner;	/* contexts: the holder is the process that opened it */
};

struct table {
	struct row *rows;
	size_t n, cap;
};

/* What one scan found; nothing is printed until it is complete. */
struct scan {
	const char *proc;
	dev_t rdev[2];	/* /dev/kfdsync, /dev/kfdsync_timeline */
	bool have[2];
	struct table t[NTABLES];
	unsigned int unreadable;
};

static void usage_list(FILE *f)
{
	fprintf(f, "usage: %s list [--json] [--proc DIR] [--dev DIR]\n"
		"List live kfdsync contexts, registered events and CPU timelines of the\n"
		"processes whose /proc/PID/fdinfo the caller may read (its own; all for\n"
		"root). --proc and --dev read another /proc and /dev (tests).\n", prog);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* A value, cut to VAL_SIZE - 1 bytes. */
static void set_val(char *dst, const char *src)
{
	size_t n;

	for (n = 0; n < VAL_SIZE - 1 && src[n]; n++)
		dst[n] = src[n];
	dst[n] = '\0';
}

static struct row *add_row(struct table *t)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct row *r = realloc(t->rows, cap * sizeof(*r));

		if (!r)
			return NULL;
		t->rows = r;
		t->cap = cap;
	}
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	return &t->rows[t->n++];
}

/*
 * A whole small file into a NUL-terminated buffer (freed by the caller);
 * NULL with errno set on failure.
 */
static char *read_all(const char *path, size_t max, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;
	int fd, err;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	for (;;) {
		if (n + 1 >= cap) {
			if (cap >= max) {
				errno = EFBIG;
				goto fail_close;
			}
			nb = realloc(buf, cap * 2);
			if (!nb)
				goto fail_close;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail_close;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
fail_close:
	err = errno;
	close(fd);
	errno = err;
fail:
	err = errno;
	free(buf);
	errno = err;
	return NULL;
}

/* The value of "key:\tvalue" in @text, copied to @out; false if absent. */
static bool fdinfo_get(const char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);

	for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		size_t vlen;

		if (strncmp(l, key, klen) || l[klen] != ':')
			continue;
		l += klen + 1;
		l += strspn(l, " \t");
		vlen = strcspn(l, "\n");
		if (vlen >= size)
			vlen = size - 1;
		memcpy(out, l, vlen);
		out[vlen] = '\0';
		return true;
	}
	return false;
}

/* Undo the module's octal escapes ("\040") in place. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* "field=value" out of an event line's value ("source=hooks age=3 ..."). */
static bool event_field(const char *line, const char *field, char *out, size_t size)
{
	size_t flen = strlen(field);

	for (const char *p = line; *p; p += strcspn(p, " "), p += strspn(p, " ")) {
		if (!strncmp(p, field, flen) && p[flen] == '=') {
			size_t vlen = strcspn(p + flen + 1, " \n");

			if (vlen >= size)
				vlen = size - 1;
			memcpy(out, p + flen + 1, vlen);
			out[vlen] = '\0';
			return true;
		}
	}
	return false;
}

/* Fill @r from fdinfo @text for table @ti; 0, or -1 with the missing key in @missing. */
static int fill_row(struct row *r, int ti, const char *text, const char *pid,
		    const char *comm, const char **missing)
{
	const struct col *c = table_cols[ti];

	for (int i = 0; c[i].name; i++) {
		switch (c[i].src) {
		case SRC_KEY:
			if (!fdinfo_get(text, c[i].key, r->v[i], VAL_SIZE)) {
				*missing = c[i].key;
				return -1;
			}
			if (!strcmp(c[i].name, "name"))
				unescape(r->v[i]);
			break;
		case SRC_TGID:
			set_val(r->v[i], pid);
			break;
		case SRC_COMM:
			set_val(r->v[i], comm);
			break;
		default:
			break;
		}
	}
	return 0;
}

/* The events of context @ctx_id, one per "kfdsync-event-<id>:" line. */
static int add_events(struct scan *s, const char *text, const char *ctx_id, const char *pid,
		      const char *path)
{
	static const char prefix[] = "kfdsync-event-";
	const struct col *c = cols_events;

	for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		char line[512], id[32];
		const char *value;
		size_t idlen;
		struct row *r;

		if (strncmp(l, prefix, sizeof(prefix) - 1))
			continue;
		idlen = strcspn(l + sizeof(prefix) - 1, ":\n");
		if (!idlen || idlen >= sizeof(id) || l[sizeof(prefix) - 1 + idlen] != ':')
			goto bad;
		memcpy(id, l + sizeof(prefix) - 1, idlen);
		id[idlen] = '\0';
		if (!all_digits(id))
			goto bad;
		value = l + sizeof(prefix) - 1 + idlen + 1;
		value += strspn(value, " \t");
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(value, "\n"), value);
		r = add_row(&s->t[T_EVENTS]);
		if (!r) {
			fail("out of memory");
			return -1;
		}
		for (int i = 0; c[i].name; i++) {
			switch (c[i].src) {
			case SRC_CTX:
				set_val(r->v[i], ctx_id);
				break;
			case SRC_TGID:
				set_val(r->v[i], pid);
				break;
			case SRC_EVENT_ID:
				set_val(r->v[i], id);
				break;
			case SRC_FIELD:
				if (!event_field(line, c[i].key, r->v[i], VAL_SIZE)) {
					fail("%s: event %s has no '%s'", path, id, c[i].key);
					return -1;
				}
				break;
			default:
				break;
			}
		}
		continue;
bad:
		fail("%s: unexpected line '%.*s'", path, (int)strcspn(l, "\n"), l);
		return -1;
	}
	return 0;
}

/* A context seen again (an inherited or passed fd): keep one row, the owner's. */
static bool seen_context(struct scan *s, const struct row *nr)
{
	struct table *t = &s->t[T_CONTEXTS];

	for (size_t i = 0; i < t->n; i++) {
		struct row *r = &t->rows[i];

		if (strcmp(r->v[0], nr->v[0]))
			continue;
		if (!r->owner && nr->owner) {
			memcpy(r->v[1], nr->v[1], VAL_SIZE);
			memcpy(r->v[2], nr->v[2], VAL_SIZE);
			r->owner = true;
			for (size_t e = 0; e < s->t[T_EVENTS].n; e++)
				if (!strcmp(s->t[T_EVENTS].rows[e].v[0], r->v[0]))
					memcpy(s->t[T_EVENTS].rows[e].v[1], nr->v[1], VAL_SIZE);
		}
		return true;
	}
	return false;
}

static bool seen_timeline(struct scan *s, const struct row *nr)
{
	struct table *t = &s->t[T_TIMELINES];

	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].v[0], nr->v[0]))
			return true;
	return false;
}

/* A process that went away, or an fd closed, while we looked. */
static bool vanished(int err)
{
	return err == ENOENT || err == ESRCH;
}

/* One fd of process @pid that is a kfdsync node (@kind 0: context, 1: timeline). */
static int scan_fd(struct scan *s, const char *pid, const char *fd, int kind,
		   const char *comm, bool *unreadable)
{
	char path[4096], owner[32];
	const char *missing = NULL;
	struct row nr = { 0 }, *r;
	int ti = kind ? T_TIMELINES : T_CONTEXTS;
	char *text;

	snprintf(path, sizeof(path), "%s/%s/fdinfo/%s", s->proc, pid, fd);
	text = read_all(path, FDINFO_MAX, NULL);
	if (!text) {
		if (vanished(errno))
			return 0;
		if (errno == EACCES || errno == EPERM) {
			*unreadable = true;
			return 0;
		}
		fail("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (fill_row(&nr, ti, text, pid, comm, &missing)) {
		fail("%s: no '%s' (a kfdsync module without fdinfo keys?)", path, missing);
		free(text);
		return -1;
	}
	if (kind == 0) {
		nr.owner = fdinfo_get(text, "kfdsync-tgid", owner, sizeof(owner)) &&
			   !strcmp(owner, pid);
		if (seen_context(s, &nr)) {
			/*
			 * Its events are listed once, but every fdinfo is
			 * checked: what fails must not depend on which of the
			 * context's fds readdir() gave first.
			 */
			struct scan scratch = { .proc = s->proc };
			int ret = add_events(&scratch, text, nr.v[0], pid, path);

			free(scratch.t[T_EVENTS].rows);
			free(text);
			return ret ? -1 : 0;
		}
	} else if (seen_timeline(s, &nr)) {
		free(text);
		return 0;
	}
	r = add_row(&s->t[ti]);
	if (!r) {
		fail("out of memory");
		free(text);
		return -1;
	}
	*r = nr;
	if (kind == 0 && add_events(s, text, nr.v[0], pid, path)) {
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/* The command name of @pid (may hold any byte but NUL); false if it is gone. */
static bool read_comm(const struct scan *s, const char *pid, char *comm, size_t size)
{
	char path[4096], *text;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s/comm", s->proc, pid);
	text = read_all(path, 4096, &len);
	if (!text)
		return false;
	if (len && text[len - 1] == '\n')
		text[--len] = '\0';
	snprintf(comm, size, "%s", text);
	free(text);
	return true;
}

static int scan_process(struct scan *s, const char *pid)
{
	char path[4096], comm[VAL_SIZE] = "";
	bool unreadable = false, have_comm = false;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s/fd", s->proc, pid);
	d = opendir(path);
	if (!d) {
		if (errno == EACCES || errno == EPERM)
			s->unreadable++;
		return 0;	/* otherwise gone, or not a process */
	}
	while (!ret && (de = readdir(d))) {
		struct stat st;
		int kind;

		if (!all_digits(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/fd/%s", s->proc, pid, de->d_name);
		if (stat(path, &st)) {
			if (errno == EACCES || errno == EPERM)
				unreadable = true;
			continue;
		}
		if (!S_ISCHR(st.st_mode))
			continue;
		if (s->have[0] && st.st_rdev == s->rdev[0])
			kind = 0;
		else if (s->have[1] && st.st_rdev == s->rdev[1])
			kind = 1;
		else
			continue;
		if (!have_comm) {
			if (!read_comm(s, pid, comm, sizeof(comm)))
				break;	/* the process is gone */
			have_comm = true;
		}
		ret = scan_fd(s, pid, de->d_name, kind, comm, &unreadable);
	}
	closedir(d);
	if (unreadable)
		s->unreadable++;
	return ret;
}

static int scan_all(struct scan *s)
{
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir(s->proc);
	if (!d) {
		fail("cannot read %s: %s", s->proc, strerror(errno));
		return -1;
	}
	while (!ret && (de = readdir(d)))
		if (all_digits(de->d_name))
			ret = scan_process(s, de->d_name);
	closedir(d);
	return ret;
}

static int cmp_num(const char *a, const char *b)
{
	unsigned long long x = strtoull(a, NULL, 10), y = strtoull(b, NULL, 10);

	return x < y ? -1 : x > y;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return cmp_num(x->v[0], y->v[0]);
}

static int cmp_events(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return cmp_num(x->v[0], y->v[0]) ?: cmp_num(x->v[3], y->v[3]);
}

/* For the table: bytes that would break a row, as octal escapes. */
static void print_text(FILE *o, const char *s, int width)
{
	int n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '\\')
			n += fprintf(o, "\\%03o", c);
		else
			n += fputc(c, o) != EOF;
	}
	for (; n < width; n++)
		fputc(' ', o);
}

/*
 * --json: numbers as JSON numbers; a value of a numeric column that is not
 * a decimal integer (a module newer than this tool) stays a string.
 */
static void json_value(FILE *o, const char *v, bool text)
{
	const char *d = v + (*v == '-');

	if (!text && all_digits(d) && strlen(d) < 20)
		fputs(v, o);
	else
		json_string(o, v);
}

static void print_tables(FILE *o, struct scan *s, bool json)
{
	if (json)
		fputc('{', o);
	for (int ti = 0; ti < NTABLES; ti++) {
		const struct col *c = table_cols[ti];
		struct table *t = &s->t[ti];
		int ncols = 0;

		while (c[ncols].name)
			ncols++;
		if (json)
			fprintf(o, "%s\"%s\": [", ti ? ", " : "", table_names[ti]);
		else
			fprintf(o, "%s%s:\n", ti ? "\n" : "", table_names[ti]);
		for (size_t ri = 0; ri < t->n; ri++) {
			const struct row *r = &t->rows[ri];

			if (json) {
				fprintf(o, "%s{", ri ? ", " : "");
				for (int i = 0; i < ncols; i++) {
					fprintf(o, "%s\"%s\": ", i ? ", " : "", c[i].name);
					json_value(o, r->v[i], c[i].text);
				}
				fputc('}', o);
				continue;
			}
			if (!ri) {
				for (int i = 0; i < ncols; i++)
					fprintf(o, "%s%-*s", i ? " " : "  ",
						i == ncols - 1 ? 0 : 10, c[i].name);
				fputc('\n', o);
			}
			for (int i = 0; i < ncols; i++) {
				fputs(i ? " " : "  ", o);
				print_text(o, r->v[i], i == ncols - 1 ? 0 : 10);
			}
			fputc('\n', o);
		}
		if (json)
			fputc(']', o);
		else if (!t->n)
			fprintf(o, "  (none)\n");
	}
	if (json)
		fputs("}\n", o);
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "proc", required_argument, NULL, 'p' },
		{ "dev", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const char *const nodes[2] = { "kfdsync", "kfdsync_timeline" };
	struct scan s = { .proc = "/proc" };
	const char *dev = "/dev";
	bool json = false;
	int c, status = 0;
	struct json_out j;
	FILE *o = stdout;

	while ((c = getopt_long(argc, argv, "jp:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			s.proc = optarg;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'h':
			usage_list(stdout);
			return 0;
		default:
			usage_list(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage_list(stderr);
		return EXIT_USAGE;
	}
	for (int i = 0; i < 2; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dev, nodes[i]);
		errno = 0;
		if (stat(path, &st) == 0 && S_ISCHR(st.st_mode)) {
			s.rdev[i] = st.st_rdev;
			s.have[i] = true;
		} else if (i == 0) {
			if (errno == ENOENT || !errno)
				fail("kfdsync module not loaded (no %s)", path);
			else
				fail("%s: %s", path, errno ? strerror(errno) : "not a device");
			return 1;
		}
	}
	if (scan_all(&s))
		status = 1;
	if (!status) {
		for (int ti = 0; ti < NTABLES; ti++)
			if (s.t[ti].n)
				qsort(s.t[ti].rows, s.t[ti].n, sizeof(struct row),
				      ti == T_EVENTS ? cmp_events : cmp_rows);
		if (json) {
			o = json_start(&j);
			if (!o)
				status = 1;
		}
		if (o) {
			print_tables(o, &s, json);
			if (json)
				status = json_finish(&j, 0);
		}
	}
	if (!status && s.unreadable)
		fprintf(stderr, "%s: %u process%s not readable (their contexts and timelines "
			"are not listed; root sees all)\n", prog, s.unreadable,
			s.unreadable == 1 ? "" : "es");
	for (int ti = 0; ti < NTABLES; ti++)
		free(s.t[ti].rows);
	return status;
}
