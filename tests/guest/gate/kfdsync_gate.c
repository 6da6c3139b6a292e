// SPDX-License-Identifier: MIT
/*
 * kfdsync_gate: kfdsync attaches to amdkfd by what the loaded amdgpu's BTF
 * says, never by the kernel's release.
 *
 * How this program works: first, on every kernel (6.1, 6.12, 6.18, 7.2,
 * newest), the verdict on Debian's own amdgpu, as KFDSYNC_IOCTL_AMDKFD_ABI,
 * STATUS, INFO, the kernel log and `kfdsync info` report it, agrees with
 * what that kernel's amdkfd is (6.1, 6.12: their ABI; 6.16 to 6.19: ABI
 * 6.16; 7.1, 7.2: ABI 7.1; hooks attached, each ABI's own set; 7.3: its
 * slot array named, relay mode), and the ioctl refuses bad arguments.
 * Then, where amdgpu can be unloaded (root, KFDSYNC_KMOD_DIR), it puts a
 * fake amdgpu in its place in each shape tests/guest/gate/build-fake
 * built, on this same kernel: 6.1's ABI (hooks attach, to the fake), 6.16's
 * (what ROCm's amdgpu-dkms brings to Debian 12: hooks attach by the BTF,
 * although the kernel is 6.1 or 6.12) and 7.1's, set_event() inlined into
 * kfd_set_event(), a set_event.part.0 clone, two of the three calls of
 * set_event_from_interrupt(), no BTF; and once with kprobes disarmed.
 * Debian's amdgpu is loaded back at the end. Each time, kfdsync's static
 * calls (<debugfs>/kfdsync/hooks) branch to the ABI's amdkfd functions
 * while the hooks are attached and nowhere after: on Debian's 6.12 and
 * later those functions' ENDBR64 is sealed at module load, which an
 * indirect call would fault on where the CPU enforces IBT.
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kfdsync_raw.h"
#include "kmod.h"

#define SIGNAL_PAGE_7_3 "struct kfd_process: signal_page is unsigned long long *, " \
			"ABI 7.1 has struct kfd_signal_page *"
#define IMPLEMENTED "6.1 6.12 6.16 7.1"
#define KPROBES_ENABLED "/sys/kernel/debug/kprobes/enabled"
#define HOOKS_DEBUGFS "/sys/kernel/debug/kfdsync/hooks"

/* What the module reports, all at once. */
struct report {
	struct kfdsync_amdkfd_abi abi;
	struct kfdsync_status status;
	struct kfdsync_info info;
};

static void report_of(struct report *r)
{
	int fd = raw_open(RAW_KFDSYNC_DEV), ret;

	if (fd < 0)
		tap_bail("open %s: %s", RAW_KFDSYNC_DEV, strerror(-fd));
	memset(r, 0, sizeof(*r));
	/* A module without the ioctl (an older one) still answers the rest. */
	ret = raw_ioctl(fd, KFDSYNC_IOCTL_AMDKFD_ABI, &r->abi);
	if ((ret && ret != -ENOTTY) || raw_status(fd, &r->status) || raw_info(fd, &r->info))
		tap_bail("AMDKFD_ABI, STATUS or INFO failed");
	close(fd);
}

static const char *verdict_name(uint32_t verdict)
{
	static const char *const names[] = { "unchecked", "match", "mismatch", "no BTF" };

	return verdict < 4 ? names[verdict] : "?";
}

/* Whether the kernel log has a line containing @needle. */
static bool kmsg_has(const char *needle)
{
	char buf[2048];
	bool found = false;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		buf[n] = '\0';
		found |= strstr(buf, needle) != NULL;
	}
	close(fd);
	return found;
}

/* Subtests that a report agrees with itself: STATUS, INFO, AMDKFD_ABI. */
static void check_consistent(const char *what, const struct report *r)
{
	bool hooks = r->status.source == KFDSYNC_SOURCE_HOOKS;
	char cut[KFDSYNC_STATUS_TEXT_LEN];

	tap_ok(!strcmp(r->abi.implemented, IMPLEMENTED) &&
	       !strcmp(r->status.verified, IMPLEMENTED),
	       "%s_implemented_abis (\"%s\", STATUS \"%s\")", what, r->abi.implemented,
	       r->status.verified);
	memcpy(cut, r->abi.reason, sizeof(cut) - 1);
	cut[sizeof(cut) - 1] = '\0';
	switch (r->abi.verdict) {
	case KFDSYNC_AMDKFD_ABI_MATCH:
		tap_ok(!r->abi.reason[0] && r->abi.abi[0] &&
		       (!hooks || (r->info.hooks == r->info.hooks_supported &&
				   !r->status.relay_reason)),
		       "%s_match_consistent (hooks %#x, relay reason %u)", what,
		       r->info.hooks, r->status.relay_reason);
		break;
	case KFDSYNC_AMDKFD_ABI_MISMATCH:
	case KFDSYNC_AMDKFD_ABI_NO_BTF:
		tap_ok(!hooks && !r->info.hooks &&
		       (r->info.info_flags & KFDSYNC_INFO_AMDKFD_UNVERIFIED) &&
		       r->status.relay_reason == (r->abi.verdict == KFDSYNC_AMDKFD_ABI_NO_BTF ?
						  KFDSYNC_RELAY_NO_BTF : KFDSYNC_RELAY_UNVERIFIED) &&
		       !strcmp(r->status.detail, cut),
		       "%s_refusal_consistent (hooks %#x, flags %#x, relay reason %u, \"%s\")",
		       what, r->info.hooks, r->info.info_flags, r->status.relay_reason,
		       r->status.detail);
		break;
	default:
		tap_ok(!hooks && !r->info.hooks, "%s_unchecked_no_hooks (\"%s\")", what,
		       r->abi.reason);
		break;
	}
}

/* The kernels this program knows the verdict for. */
static const struct expect {
	const char *release;	/* prefix */
	uint32_t verdict;
	const char *abi;
	const char *reason;
	bool sealed;		/* amdgpu built with IBT: called functions sealed */
} expects[] = {
	/* Debian's 6.1, and tools/debug-kernel's from its linux-source-6.1. */
	{ "6.1.", KFDSYNC_AMDKFD_ABI_MATCH, "6.1", "", false },
	{ "6.12.", KFDSYNC_AMDKFD_ABI_MATCH, "6.12", "", true },
	{ "6.16.", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", true },
	{ "6.17.", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", true },
	{ "6.18.", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", true },
	{ "6.19.", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", true },
	{ "7.1.", KFDSYNC_AMDKFD_ABI_MATCH, "7.1", "", true },
	{ "7.2.", KFDSYNC_AMDKFD_ABI_MATCH, "7.1", "", true },
	{ "7.3.", KFDSYNC_AMDKFD_ABI_MISMATCH, "7.1", SIGNAL_PAGE_7_3, true },
};

/* The hooks of each ABI (INFO's hooks_supported, all attached on a match). */
#define HOOKS_6_1	0xffU
#define HOOKS_7_1	(HOOKS_6_1 | KFDSYNC_HOOK_UNWRITTEN | KFDSYNC_HOOK_TERMINATE)

static uint32_t hooks_of(const char *abi)
{
	return !strcmp(abi, "7.1") ? HOOKS_7_1 : HOOKS_6_1;
}

/* The amdkfd functions kfdsync calls, per ABI (kfdsync_abi_list.h). */
static const struct call {
	const char *call, *function, *abis;	/* abis: " 6.1 6.12 " */
} calls[] = {
	{ "lookup_pasid", "kfd_lookup_process_by_pasid", " 6.1 6.12 " },
	{ "lookup_pasid_pdd", "kfd_lookup_process_by_pasid", " 6.16 7.1 " },
	{ "lookup_mm", "kfd_lookup_process_by_mm", " 6.1 6.12 6.16 7.1 " },
	{ "unref", "kfd_unref_process", " 6.1 6.12 6.16 7.1 " },
	{ "set_event", "kfd_set_event", " 6.1 6.12 6.16 7.1 " },
	{ "pdd_of_dev", "kfd_get_process_device_data", " 6.1 " },
	{ "pdd_of_node", "kfd_get_process_device_data", " 6.12 6.16 7.1 " },
};

/*
 * Where kfdsync's static calls branch (<debugfs>/kfdsync/hooks): with the
 * hooks of ABI @abi attached, to each of its functions' entry, and every
 * other one returns 0; with @abi NULL, every one returns 0. With @sealed,
 * each function's code starts as module load leaves a sealed ENDBR64
 * (6.12's "osp nopl (%rax)" or the "nopl -42(%rax)" of 6.18 on): kfdsync
 * reaches them, as the hooks' programs show, by direct branches only.
 */
static void check_calls(const char *what, const char *abi, bool sealed)
{
	char line[512], call[64], function[128], target[256], want[192], key[32];
	unsigned int seen = 0, right = 0, nr_sealed = 0, n = sizeof(calls) / sizeof(calls[0]);
	bool in_calls = false;
	FILE *f;

	if (access(HOOKS_DEBUGFS, R_OK) &&
	    mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) && errno != EBUSY) {
		tap_skip("no debugfs", "%s_static_calls", what);
		return;
	}
	f = fopen(HOOKS_DEBUGFS, "re");
	if (!f) {
		tap_skip("no kfdsync/hooks in debugfs", "%s_static_calls", what);
		return;
	}
	snprintf(key, sizeof(key), " %s ", abi ? abi : "");
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "# call ", 7))
			in_calls = true;
		if (!in_calls || line[0] == '#' ||
		    sscanf(line, "%63s %127s %255[^\n]", call, function, target) != 3)
			continue;
		for (unsigned int i = 0; i < n; i++) {
			bool live = abi && strstr(calls[i].abis, key);

			if (strcmp(call, calls[i].call) || strcmp(function, calls[i].function))
				continue;
			seen++;
			snprintf(want, sizeof(want), "%s+0x0/", function);
			if (live ? !strncmp(target, want, strlen(want)) && strstr(target, ", code ")
				 : !strcmp(target, "returns 0"))
				right++;
			else
				tap_diag("%s: %s %s -> %s", what, call, function, target);
			if (live && (strstr(target, ", code 660f1f00") ||
				     strstr(target, ", code 0f1f40d6")))
				nr_sealed++;
		}
	}
	fclose(f);
	tap_ok(seen == n && right == n, "%s_static_calls_%s (%u of %u right)", what,
	       abi ? "branch_to_amdkfd" : "return_0", right, n);
	if (abi && sealed)
		tap_ok(nr_sealed == 5, "%s_called_functions_sealed (%u of 5)", what, nr_sealed);
}

TEST(debian_amdgpu)
{
	const struct expect *e = NULL;
	struct utsname u;
	struct report r;
	size_t i;

	uname(&u);
	for (i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		if (!strncmp(u.release, expects[i].release, strlen(expects[i].release)))
			e = &expects[i];
	if (access("/sys/module/amdgpu", F_OK)) {
		tap_skip("amdgpu is not loaded", "debian_amdgpu_verdict");
		return;
	}
	report_of(&r);
	tap_diag("Linux %s: %s, ABI \"%s\", \"%s\"", u.release, verdict_name(r.abi.verdict),
		 r.abi.abi, r.abi.reason);
	if (!e)
		tap_skip("no expectation for this kernel release", "debian_amdgpu_verdict");
	else
		tap_ok(r.abi.verdict == e->verdict && !strcmp(r.abi.abi, e->abi) &&
		       !strcmp(r.abi.reason, e->reason),
		       "debian_amdgpu_verdict (%s, ABI %s; want %s, ABI %s, \"%s\")",
		       verdict_name(r.abi.verdict), r.abi.abi, verdict_name(e->verdict), e->abi,
		       e->reason);
	check_consistent("debian_amdgpu", &r);
	if (r.abi.verdict == KFDSYNC_AMDKFD_ABI_MATCH)
		tap_ok(r.info.hooks == r.info.hooks_supported &&
		       r.info.hooks == hooks_of(r.abi.abi),
		       "debian_amdgpu_hooks_attached (%#x, ABI %s's %#x)", r.info.hooks,
		       r.abi.abi, hooks_of(r.abi.abi));
	else
		tap_ok(kmsg_has(r.abi.reason) && kmsg_has("no hooks, relay mode"),
		       "debian_amdgpu_refusal_in_kernel_log");
	check_calls("debian_amdgpu", r.status.source == KFDSYNC_SOURCE_HOOKS ? r.abi.abi : NULL,
		    e && e->sealed);
}

/* `kfdsync info` (and --json) shows the verdict and its reason. */
TEST(cli_info)
{
	const char *root = getenv("KFDSYNC_BUILD_ROOT");
	char cmd[1024], out[8192];
	struct report r;
	size_t n;
	FILE *p;

	if (!root) {
		tap_skip("KFDSYNC_BUILD_ROOT not set", "cli_info_shows_verdict");
		tap_skip("KFDSYNC_BUILD_ROOT not set", "cli_info_json_shows_verdict");
		return;
	}
	report_of(&r);
	for (int json = 0; json < 2; json++) {
		bool ok;

		snprintf(cmd, sizeof(cmd), "%s/bridge/kfdsync info%s", root,
			 json ? " --json" : "");
		p = popen(cmd, "r");
		n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
		out[n] = '\0';
		if (p)
			pclose(p);
		if (json)
			ok = tap_ok(strstr(out, "\"amdkfd_abi\": {\"verdict\": ") &&
			       (!r.abi.reason[0] || strstr(out, r.abi.reason)) &&
			       strstr(out, "\"implemented\": \"" IMPLEMENTED "\""),
			       "cli_info_json_shows_verdict");
		else
			ok = tap_ok(strstr(out, "amdkfd:   ") && (!r.abi.reason[0] ||
							   strstr(out, r.abi.reason)) &&
			       (!r.abi.abi[0] || strstr(out, r.abi.abi)),
			       "cli_info_shows_verdict");
		if (!ok)
			tap_diag("%s", out);
	}
}

/* The ioctl checks its argument as every kfdsync ioctl does. */
TEST(abi_ioctl_bad_input)
{
	struct kfdsync_amdkfd_abi a;
	int fd = raw_open(RAW_KFDSYNC_DEV);
	void *ro;

	memset(&a, 0, sizeof(a));
	a.flags = 1;
	tap_ret(raw_ioctl(fd, KFDSYNC_IOCTL_AMDKFD_ABI, &a), -EINVAL, "abi_ioctl_flags_einval");
	memset(&a, 0, sizeof(a));
	a.pad = 1;
	tap_ret(raw_ioctl(fd, KFDSYNC_IOCTL_AMDKFD_ABI, &a), -EINVAL, "abi_ioctl_pad_einval");
	tap_ret(raw_ioctl(fd, KFDSYNC_IOCTL_AMDKFD_ABI, NULL), -EFAULT, "abi_ioctl_null_efault");
	/* Readable, zeroed, but not writable: the copy back fails. */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_ret(raw_ioctl(fd, KFDSYNC_IOCTL_AMDKFD_ABI, ro), -EFAULT,
		"abi_ioctl_read_only_efault");
	munmap(ro, 4096);
	close(fd);
}

/* ---- fake amdgpus on this kernel ---- */

static const char *fake_skip;

/* insmod the fake amdgpu of @shape. */
static int fake_load(const char *shape)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "fake-amdgpu/%s/amdgpu.ko", shape);
	return kmod_load_project(rel, "");
}

static const struct fake {
	const char *shape;
	uint32_t verdict;
	const char *abi;
	const char *reason;	/* the verdict's */
	uint32_t relay;		/* STATUS.relay_reason; 0: hooks attached */
	const char *detail;	/* STATUS.detail contains it */
} fakes[] = {
	{ "abi61", KFDSYNC_AMDKFD_ABI_MATCH, "6.1", "", 0, "" },
	{ "abi616", KFDSYNC_AMDKFD_ABI_MATCH, "6.16", "", 0, "" },
	{ "abi71", KFDSYNC_AMDKFD_ABI_MATCH, "7.1", "", 0, "" },
	{ "inlined", KFDSYNC_AMDKFD_ABI_MATCH, "6.1", "", KFDSYNC_RELAY_INLINED,
	  "set_event called 0 times, not 1, by kfd_set_event" },
	{ "clone", KFDSYNC_AMDKFD_ABI_MATCH, "6.1", "", KFDSYNC_RELAY_INLINED,
	  "set_event has 1 clone in amdgpu" },
	{ "sites", KFDSYNC_AMDKFD_ABI_MATCH, "6.1", "", KFDSYNC_RELAY_INLINED,
	  "set_event_from_interrupt called 2 times, not 3" },
	{ "nobtf", KFDSYNC_AMDKFD_ABI_NO_BTF, "",
	  "amdgpu has no BTF (/sys/kernel/btf/amdgpu does not exist)", KFDSYNC_RELAY_NO_BTF,
	  "amdgpu has no BTF" },
};

static void fake_check(const struct fake *f, const char *what)
{
	char gone[80];
	struct report r;
	int ret;

	ret = fake_load(f->shape);
	if (ret) {
		tap_ok(false, "%s_loads (%s)", what, strerror(-ret));
		return;
	}
	report_of(&r);
	tap_ok(r.abi.verdict == f->verdict && !strcmp(r.abi.abi, f->abi) &&
	       !strcmp(r.abi.reason, f->reason),
	       "%s_verdict (%s, ABI \"%s\", \"%s\")", what, verdict_name(r.abi.verdict),
	       r.abi.abi, r.abi.reason);
	if (!f->relay)
		tap_ok(r.status.source == KFDSYNC_SOURCE_HOOKS &&
		       r.info.hooks == r.info.hooks_supported &&
		       r.info.hooks == hooks_of(f->abi),
		       "%s_hooks_attached (%#x)", what, r.info.hooks);
	else
		tap_ok(r.status.source == KFDSYNC_SOURCE_RELAY && !r.info.hooks &&
		       r.status.relay_reason == f->relay && strstr(r.status.detail, f->detail),
		       "%s_relay_mode (source %u, hooks %#x, reason %u, \"%s\")", what,
		       r.status.source, r.info.hooks, r.status.relay_reason, r.status.detail);
	check_calls(what, r.status.source == KFDSYNC_SOURCE_HOOKS ? f->abi : NULL, false);
	if (f->reason[0])
		tap_ok(kmsg_has(f->reason), "%s_reason_in_kernel_log", what);
	check_consistent(what, &r);
	ret = kmod_unload("amdgpu", 100);
	if (ret)
		tap_bail("rmmod the fake amdgpu (%s): %s", f->shape, strerror(-ret));
	report_of(&r);
	tap_ok(r.abi.verdict == KFDSYNC_AMDKFD_ABI_UNCHECKED && !r.info.hooks &&
	       r.status.relay_reason == KFDSYNC_RELAY_NO_AMDGPU,
	       "%s_gone_unchecked (%s, \"%s\")", what, verdict_name(r.abi.verdict), r.abi.reason);
	snprintf(gone, sizeof(gone), "%s_gone", what);
	check_calls(gone, NULL, false);
}

static const char *const fake_tests[] = {
	"fake_abi61", "fake_abi616", "fake_inlined", "fake_clone", "fake_sites", "fake_nobtf",
	"fake_kprobes_disarmed", "debian_amdgpu_back",
};

TEST(fakes)
{
	struct report r, before;
	char what[64];
	size_t i;
	int ret;

	if (!fake_skip) {
		report_of(&before);
		ret = kmod_unload("amdgpu", 100);
		if (ret)
			fake_skip = "amdgpu cannot be unloaded here";
	}
	if (fake_skip) {
		for (i = 0; i < sizeof(fake_tests) / sizeof(fake_tests[0]); i++)
			tap_skip(fake_skip, "%s", fake_tests[i]);
		return;
	}
	for (i = 0; i < sizeof(fakes) / sizeof(fakes[0]); i++) {
		snprintf(what, sizeof(what), "fake_%s", fakes[i].shape);
		fake_check(&fakes[i], what);
	}

	/* kprobes disarmed: a kprobe registered then never fires. */
	ret = write_text(KPROBES_ENABLED, "0");
	if (ret) {
		tap_skip("no kprobes/enabled in debugfs", "fake_kprobes_disarmed");
	} else {
		ret = fake_load("abi61");
		report_of(&r);
		tap_ok(!ret && r.status.relay_reason == KFDSYNC_RELAY_KPROBES_OFF && !r.info.hooks,
		       "fake_kprobes_disarmed (reason %u, \"%s\")", r.status.relay_reason,
		       r.status.detail);
		if (write_text(KPROBES_ENABLED, "1"))
			tap_bail("cannot arm kprobes again");
		if (!ret && kmod_unload("amdgpu", 100))
			tap_bail("rmmod the fake amdgpu");
	}

	/* Debian's amdgpu again: the verdict it had. */
	ret = system("modprobe amdgpu");
	report_of(&r);
	tap_ok(!ret && r.abi.verdict == before.abi.verdict && !strcmp(r.abi.abi, before.abi.abi) &&
	       !strcmp(r.abi.reason, before.abi.reason) && r.info.hooks == before.info.hooks,
	       "debian_amdgpu_back (%s, hooks %#x)", verdict_name(r.abi.verdict), r.info.hooks);
}

static void require(void)
{
	struct stat st;
	char path[4096];
	const char *dir = getenv("KFDSYNC_KMOD_DIR");

	if (access(RAW_KFDSYNC_DEV, F_OK))
		harness_skip_program("kfdsync is not loaded");
	if (!dir || geteuid())
		fake_skip = "needs the guest (KFDSYNC_KMOD_DIR) and root";
	else if (snprintf(path, sizeof(path), "%s/fake-amdgpu/abi61/amdgpu.ko", dir),
		 stat(path, &st))
		fake_skip = "the fake amdgpus are not built for this kernel";
	else if (access("/dev/kfd", F_OK) || access("/sys/module/amdgpu", F_OK))
		fake_skip = "amdgpu is not loaded here";
}

int main(int argc, char **argv)
{
	harness_require = require;
	return harness_main(argc, argv);
}
