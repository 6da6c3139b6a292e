// SPDX-License-Identifier: MIT
/* kfdsync list: live contexts, events and timelines, from kfdsync's debugfs tables. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"

#define DEBUGFS_DIR "/sys/kernel/debug/kfdsync"
#define ARRAY_SIZE(a) ((int)(sizeof(a) / sizeof((a)[0])))

/*
 * One debugfs table: "#" comment lines, the last of which names the
 * columns, then rows of whitespace-separated columns. The columns come
 * from that header line, so the tables may grow. Two columns are free text
 * and may contain spaces: "comm", a process's name, and "name" when it is
 * the last column, which takes the rest of the line.
 *
 * debugfs is for people, and this parser is a stopgap until the module
 * offers a stable query interface. comm is found by position: the module
 * prints each column padded to the width its header gives it ("%-16s "
 * for comm, which is at most 15 bytes), so comm is the text in that
 * field, spaces and digits included ("gst 1"). A row whose comm does not
 * fit its field falls back to a guess: comm ends where the expected run of
 * numbers begins (ambiguous for a comm ending in a number).
 */
#define MAX_COLS 16

struct table {
	char names[MAX_COLS][32];
	const char *cols[MAX_COLS];
	int width[MAX_COLS];	/* from the header: distance to the next column */
	int ncols;
	int comm_col;	/* or -1 */
	bool name_last;
};

static const char *const table_files[] = { "contexts", "events", "timelines" };

/* A "# col col ..." line of lowercase names: take it as @t's header. */
static void parse_header(const char *line, struct table *t)
{
	char copy[1024], *save, *tok;
	struct table h = { .comm_col = -1 };

	int start[MAX_COLS];

	snprintf(copy, sizeof(copy), "%s", line + 1);
	for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (h.ncols == MAX_COLS || strlen(tok) >= sizeof(h.names[0]) ||
		    strspn(tok, "abcdefghijklmnopqrstuvwxyz_") != strlen(tok))
			return;	/* a summary line, not a header */
		if (!strcmp(tok, "comm"))
			h.comm_col = h.ncols;
		start[h.ncols] = (int)(tok - copy);
		strcpy(h.names[h.ncols++], tok);
	}
	if (h.ncols < 2)
		return;
	for (int i = 0; i < h.ncols; i++)
		h.width[i] = i + 1 < h.ncols ? start[i + 1] - start[i] : 0;
	h.name_last = !strcmp(h.names[h.ncols - 1], "name");
	*t = h;
	for (int i = 0; i < t->ncols; i++)
		t->cols[i] = t->names[i];
}

/* Join tokens [from, to) back into one string (they are adjacent in @line). */
static char *join(char **tok, int from, int to)
{
	for (int i = from + 1; i < to; i++)
		tok[i][-1] = ' ';
	return tok[from];
}

static bool is_number(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if ((*s < '0' || *s > '9') && *s != 'x' && !(*s >= 'a' && *s <= 'f'))
			return false;
	return true;
}

/*
 * Cut comm out of @line by position (see struct table): the columns
 * before it are single words, each padded to its header width. On
 * success, comm is NUL-terminated in place (trailing padding removed),
 * *@rest points after it and 0 is returned; -1 if the row does not have
 * that shape.
 */
static int cut_comm(char *line, const struct table *t, char **f, char **rest)
{
	size_t pos = 0, len = strlen(line), w;

	for (int i = 0; i < t->comm_col; i++) {
		size_t tl = strcspn(line + pos, " \t\n"), next;

		if (!tl || t->width[i] < 2)
			return -1;
		next = pos + (tl + 1 > (size_t)t->width[i] ? tl + 1 : (size_t)t->width[i]);
		/* Padding only, up to where the next column starts. */
		if (next >= len || line[next] == ' ' ||
		    strspn(line + pos + tl, " ") != next - pos - tl)
			return -1;
		f[i] = line + pos;
		f[i][tl] = '\0';
		pos = next;
	}
	w = (size_t)t->width[t->comm_col];
	/* comm fills its field, one space, then the next column. */
	if (w < 2 || pos + w >= len || line[pos + w - 1] != ' ' || line[pos + w] == ' ')
		return -1;
	f[t->comm_col] = line + pos;
	line[pos + w - 1] = '\0';
	for (char *e = line + pos + w - 2; e >= line + pos && *e == ' '; e--)
		*e = '\0';
	*rest = line + pos + w;
	return *f[t->comm_col] ? 0 : -1;
}

/* Split one row into @t->ncols fields; 0 or -1 if it does not fit. */
static int split_row(char *line, const struct table *t, char **f)
{
	int n = 0, fixed_after, comm_end;
	char *tok[128], copy[1024], *rest;

	/* comm by position first; the guess below only if that fails. */
	snprintf(copy, sizeof(copy), "%s", line);
	if (t->comm_col >= 0 && !t->name_last && cut_comm(line, t, f, &rest) == 0) {
		for (char *save, *p = strtok_r(rest, " \t\n", &save); p;
		     p = strtok_r(NULL, " \t\n", &save)) {
			if (t->comm_col + 1 + n >= t->ncols) {
				n = -1;
				break;
			}
			f[t->comm_col + 1 + n++] = p;
		}
		if (t->comm_col + 1 + n == t->ncols)
			return 0;
		n = 0;
	}
	if (t->comm_col >= 0 && t->name_last && cut_comm(line, t, f, &rest) == 0) {
		int i = t->comm_col + 1;
		char *save, *p = rest;

		for (; p && i < t->ncols - 1; i++) {
			p = strtok_r(i == t->comm_col + 1 ? rest : NULL, " \t\n", &save);
			f[i] = p;
		}
		if (p) {
			/* The last column, "name", is the rest of the line. */
			p = i == t->comm_col + 1 ? rest : save;
			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = '\0';
			f[i] = p;
			if (*p)
				return 0;
		}
	}
	strcpy(line, copy);

	for (char *save, *p = strtok_r(line, " \t\n", &save); p && n < 128;
	     p = strtok_r(NULL, " \t\n", &save))
		tok[n++] = p;
	if (n < t->ncols)
		return -1;
	if (t->comm_col < 0) {
		if (n != t->ncols && !t->name_last)
			return -1;
		for (int i = 0; i < t->ncols - 1; i++)
			f[i] = tok[i];
		f[t->ncols - 1] = join(tok, t->ncols - 1, n);
		return 0;
	}
	for (int i = 0; i < t->comm_col; i++)
		f[i] = tok[i];
	fixed_after = t->ncols - t->comm_col - 1 - (t->name_last ? 1 : 0);
	if (t->name_last) {
		/* comm ends where @fixed_after numbers in a row begin. */
		for (comm_end = t->comm_col + 1; comm_end + fixed_after < n; comm_end++) {
			int k = 0;

			while (k < fixed_after && is_number(tok[comm_end + k]))
				k++;
			if (k == fixed_after)
				break;
		}
		if (comm_end + fixed_after >= n)
			return -1;
	} else {
		comm_end = n - fixed_after;
	}
	f[t->comm_col] = join(tok, t->comm_col, comm_end);
	for (int i = 0; i < fixed_after; i++)
		f[t->comm_col + 1 + i] = tok[comm_end + i];
	if (t->name_last)
		f[t->ncols - 1] = join(tok, comm_end + fixed_after, n);
	return 0;
}

static void usage_list(FILE *f)
{
	fprintf(f, "usage: %s list [--json] [--debugfs DIR]\n"
		"List live kfdsync contexts, registered events and CPU timelines\n"
		"(from debugfs: needs root and debugfs at /sys/kernel/debug; or from\n"
		"DIR, a copy of " DEBUGFS_DIR ").\n", prog);
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "debugfs", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *dir = DEBUGFS_DIR;
	bool json = false, copy = false;
	int c, status = 0;
	struct json_out j;
	FILE *o = stdout;

	while ((c = getopt_long(argc, argv, "jd:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'd':
			dir = optarg;
			copy = true;
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
	if (access(dir, F_OK)) {
		if (errno == EACCES)
			fail("cannot read %s: debugfs is readable by root only", dir);
		else if (!copy &&
			 (access("/sys/kernel/debug/.", F_OK) || access("/dev/kfdsync", F_OK)))
			fail("no %s: is debugfs mounted and kfdsync loaded?", dir);
		else
			fail("no %s: %s", dir, strerror(errno));
		return 1;
	}
	if (json) {
		o = json_start(&j);
		if (!o)
			return 1;
		fputc('{', o);
	}
	for (int ti = 0; ti < ARRAY_SIZE(table_files) && !status; ti++) {
		const char *title = table_files[ti];
		struct table t = { .comm_col = -1 };
		char path[4096], line[1024], raw[1024];
		unsigned int rows = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, title);
		f = fopen(path, "re");
		if (!f) {
			fail("cannot read %s: %s", path, strerror(errno));
			status = 1;
			break;
		}
		if (json)
			fprintf(o, "%s\"%s\": [", ti ? ", " : "", title);
		else
			fprintf(o, "%s%s:\n", ti ? "\n" : "", title);
		while (fgets(line, sizeof(line), f)) {
			char *fields[MAX_COLS];

			if (line[0] == '#') {
				parse_header(line, &t);
				continue;
			}
			if (line[0] == '\n')
				continue;
			/* split_row() cuts @line up: keep it whole for the message. */
			memcpy(raw, line, sizeof(raw));
			if (!t.ncols || split_row(line, &t, fields)) {
				fail("%s: unexpected line '%s'%s", path, strtok(raw, "\n"),
				     t.ncols ? "" : " (no column header)");
				status = 1;
				break;
			}
			if (json) {
				fprintf(o, "%s{", rows ? ", " : "");
				for (int i = 0; i < t.ncols; i++) {
					fprintf(o, "%s\"%s\": ", i ? ", " : "", t.cols[i]);
					json_string(o, fields[i]);
				}
				fputc('}', o);
			} else {
				if (!rows)
					for (int i = 0; i < t.ncols; i++)
						fprintf(o, "%s%-*s", i ? " " : "  ",
							i == t.ncols - 1 ? 0 : 10, t.cols[i]);
				if (!rows)
					fputc('\n', o);
				for (int i = 0; i < t.ncols; i++)
					fprintf(o, "%s%-*s", i ? " " : "  ",
						i == t.ncols - 1 ? 0 : 10, fields[i]);
				fputc('\n', o);
			}
			rows++;
		}
		fclose(f);
		if (json)
			fputc(']', o);
		else if (!rows && !status)
			fprintf(o, "  (none)\n");
	}
	if (json) {
		fputs("}\n", o);
		status = json_finish(&j, status);
	}
	return status;
}
