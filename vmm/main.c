// SPDX-License-Identifier: GPL-2.0
/*
 * hwlab-vmm: a small KVM VMM that keeps its guest alive across host memory
 * errors. The kernel's memory-failure code sends it SIGBUS (BUS_MCEERR_AO
 * when it finds a bad page, BUS_MCEERR_AR when a vCPU consumes one); the VMM
 * maps si_addr to guest-physical memory and injects a machine check the
 * guest can recover from.
 */
#define _GNU_SOURCE
#include "vmm.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "report.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hwlab-vmm [options] GUEST.elf\n"
		"       hwlab-vmm --check\n"
		"  --mem MIB            guest RAM (default 16, at least 8)\n"
		"  --slots N            split RAM into N memslots (default 1)\n"
		"  --backing KIND       anon | thp | hugetlb (default anon)\n"
		"  --vcpus N            vCPU threads (default 1, at most %d)\n"
		"  --passes N           guest workload passes (default 3; 0: until SIGTERM)\n"
		"  --mce-kill POLICY    early | late | sysctl: PR_MCE_KILL for the VMM (default sysctl)\n"
		"  --guest-no-mce       guest leaves CR4.MCE clear\n"
		"  --guest-keep-mcip    guest's #MC handler never clears MCG_STATUS.MCIP\n"
		"  --guest-retry-ar     guest's #MC handler returns into the poisoned access\n"
		"  --mce-lsb MODE       extent: MCi_MISC LSB = si_addr_lsb, one vMCE per huge page\n"
		"                       (default); page: always LSB 12 at the si_addr page, as a\n"
		"                       Linux guest needs\n"
		"  --on-unrecoverable A stop | reset: when the guest cannot take a machine check\n"
		"  --memmap FILE        memslot table for tools (default /tmp/hwlab-vmm.PID.memmap)\n"
		"  --poison-gpa GPA     test hook: poison GPA after vCPU 0 reports --poison-pass\n"
		"  --poison-pass N      (default 1)\n"
		"  --poison-method M    madvise | corrupt-pfn (default madvise)\n"
		"  --poison-vmm-heap    test hook: poison (and, without early kill, read) a page\n"
		"                       of the VMM's own heap, outside guest RAM\n"
		"  --check              check /dev/kvm, KVM_CREATE_VM and MCE support, then exit\n",
		GUEST_MAX_VCPUS);
}

static int parse_u64(const char *s, const char *what, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end || *out > max) {
		fprintf(stderr, "hwlab-vmm: error: %s: '%s' is not a number up to %llu\n", what, s,
			(unsigned long long)max);
		return -1;
	}
	return 0;
}

struct choice {
	const char *name;
	int value;
};

/* The value of the choice named arg; -1 (with a message) if there is none. */
static int parse_choice(const char *arg, const char *what, const struct choice *c, int *out)
{
	for (; c->name; c++)
		if (!strcmp(arg, c->name)) {
			*out = c->value;
			return 0;
		}
	fprintf(stderr, "hwlab-vmm: error: %s: bad value '%s'\n", what, arg);
	return -1;
}

static const struct choice backings[] = {
	{ "anon", BACKING_ANON }, { "thp", BACKING_THP }, { "hugetlb", BACKING_HUGETLB }, { 0 },
};
static const struct choice mce_kill_policies[] = {
	{ "early", PR_MCE_KILL_EARLY }, { "late", PR_MCE_KILL_LATE }, { "sysctl", -1 }, { 0 },
};
static const struct choice mce_lsb_modes[] = { { "extent", 0 }, { "page", 1 }, { 0 } };
static const struct choice unrecoverable_actions[] = { { "stop", 0 }, { "reset", 1 }, { 0 } };
static const struct choice poison_methods[] = { { "madvise", 0 }, { "corrupt-pfn", 1 }, { 0 } };

static int check_kvm(void)
{
	char err[256];
	uint64_t mce_cap = 0;
	int kvm = kvm_open_checked(err, sizeof(err)), vm;

	if (kvm < 0) {
		fprintf(stderr, "hwlab-vmm: error: %s\n", err);
		return 1;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		fprintf(stderr, "hwlab-vmm: error: KVM_CREATE_VM: %s\n", strerror(errno));
		return 1;
	}
	ioctl(kvm, KVM_X86_GET_MCE_CAP_SUPPORTED, &mce_cap);
	report("check", "\"api_version\":%d,\"create_vm\":true,\"cap_mce_banks\":%d,"
	       "\"mce_cap_supported\":\"%#llx\"", ioctl(kvm, KVM_GET_API_VERSION, 0),
	       ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MCE), (unsigned long long)mce_cap);
	return 0;
}

static int parse_options(int argc, char **argv, struct vmm_options *o)
{
	static const struct option longopts[] = {
		{ "mem", 1, 0, 'm' }, { "slots", 1, 0, 's' }, { "backing", 1, 0, 'b' },
		{ "vcpus", 1, 0, 'c' }, { "passes", 1, 0, 'p' }, { "mce-kill", 1, 0, 'k' },
		{ "guest-no-mce", 0, 0, 'n' }, { "guest-keep-mcip", 0, 0, 'K' },
		{ "guest-retry-ar", 0, 0, 'R' }, { "on-unrecoverable", 1, 0, 'u' },
		{ "memmap", 1, 0, 'M' }, { "poison-gpa", 1, 0, 'g' }, { "poison-pass", 1, 0, 'P' },
		{ "poison-method", 1, 0, 'x' }, { "mce-lsb", 1, 0, 'L' },
		{ "poison-vmm-heap", 0, 0, 'H' }, { "check", 0, 0, 'C' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	uint64_t v;
	int c, r = 0, choice;

	*o = (struct vmm_options) {
		.mem_size = 16ULL << 20, .nr_slots = 1, .backing = BACKING_ANON,
		.nr_vcpus = 1, .passes = 3, .mce_kill = -1, .max_resets = 3, .poison_pass = 1,
	};
	while (!r && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			r = parse_u64(optarg, "--mem", 1 << 20, &v);
			o->mem_size = v << 20;
			break;
		case 's':
			r = parse_u64(optarg, "--slots", MAX_MEMSLOTS, &v);
			o->nr_slots = v;
			break;
		case 'c':
			r = parse_u64(optarg, "--vcpus", GUEST_MAX_VCPUS, &v);
			o->nr_vcpus = v;
			break;
		case 'p':
			r = parse_u64(optarg, "--passes", UINT32_MAX, &v);
			o->passes = v;
			break;
		case 'P':
			r = parse_u64(optarg, "--poison-pass", UINT32_MAX, &v);
			o->poison_pass = v;
			break;
		case 'g':
			if (o->nr_poison == MAX_POISON_HOOKS) {
				fprintf(stderr, "hwlab-vmm: error: at most %d --poison-gpa\n",
					MAX_POISON_HOOKS);
				return -1;
			}
			r = parse_u64(optarg, "--poison-gpa", UINT64_MAX, &o->poison_gpas[o->nr_poison++]);
			break;
		case 'b':
			r = parse_choice(optarg, "--backing", backings, &choice);
			o->backing = choice;
			break;
		case 'k':
			r = parse_choice(optarg, "--mce-kill", mce_kill_policies, &o->mce_kill);
			break;
		case 'L':
			r = parse_choice(optarg, "--mce-lsb", mce_lsb_modes, &o->mce_page_lsb);
			break;
		case 'u':
			r = parse_choice(optarg, "--on-unrecoverable", unrecoverable_actions,
					 &o->reset_on_unrecoverable);
			break;
		case 'x':
			r = parse_choice(optarg, "--poison-method", poison_methods,
					 &o->poison_corrupt_pfn);
			break;
		case 'n':
			o->guest_no_mce = 1;
			break;
		case 'K':
			o->guest_keep_mcip = 1;
			break;
		case 'R':
			o->guest_retry_ar = 1;
			break;
		case 'H':
			o->poison_vmm_heap = 1;
			break;
		case 'M':
			o->memmap_path = optarg;
			break;
		case 'C':
			exit(check_kvm());
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (r)
		return -1;
	if (optind + 1 != argc) {
		usage(stderr);
		return -1;
	}
	o->image_path = argv[optind];
	if (o->mem_size < (8ULL << 20) || o->mem_size > (3ULL << 30) ||
	    o->nr_slots < 1 ||
	    o->mem_size % (o->nr_slots * (2ULL << 20))) {
		fprintf(stderr, "hwlab-vmm: error: --mem must be 8..3072 MiB and a multiple of "
			"2 MiB per slot (%u slots)\n", o->nr_slots);
		return -1;
	}
	/* parse_u64() already bounded --slots and --vcpus from above */
	if (o->nr_vcpus < 1) {
		fprintf(stderr, "hwlab-vmm: error: --vcpus must be 1..%d\n",
			GUEST_MAX_VCPUS);
		return -1;
	}
	for (c = 0; c < (int)o->nr_poison; c++)
		if (o->poison_gpas[c] < GUEST_WORKSET_GPA || o->poison_gpas[c] >= o->mem_size) {
			fprintf(stderr, "hwlab-vmm: error: --poison-gpa %#llx is outside the guest's "
				"working set [%#llx, %#llx)\n", (unsigned long long)o->poison_gpas[c],
				GUEST_WORKSET_GPA, (unsigned long long)o->mem_size);
			return -1;
		}
	return 0;
}

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* An AO event from the kernel: translate, dedupe, queue for vCPU 0. */
static void handle_action_optional(struct vm *vm, const struct sigbus_event *ev)
{
	struct pending_mce p;
	int added = mce_event_prepare(vm, ev, &p);

	if (added < 0)
		mce_event_report(NULL, &p, "ignore", "poisoned page outside guest RAM (VMM memory)");
	else if (added == 0)
		mce_event_report(NULL, &p, "ignore", "page already known to be poisoned");
	else if (vcpu_queue_mce(&vm->vcpus[0], &p))
		mce_event_report(NULL, &p, "fatal", "injection queue full");
}

static int all_vcpus_finished(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++)
		if (__atomic_load_n(&vm->vcpus[i].state, __ATOMIC_ACQUIRE) == VCPU_RUNNING)
			return 0;
	return 1;
}

/* The main thread: receives AO signals (it is the early-kill thread). */
static void monitor(struct vm *vm, int ao_fd)
{
	struct pollfd pfd = { .fd = ao_fd, .events = POLLIN };
	struct sigbus_event ev;
	char drain[64];

	while (!all_vcpus_finished(vm)) {
		if (stop_signal && !vm->stop) {
			report("stop", "\"signal\":%d", (int)stop_signal);
			vm->stop = 1;
			vm_kick_all(vm);
		}
		if (poll(&pfd, 1, 20) > 0)
			while (read(ao_fd, drain, sizeof(drain)) > 0)
				;
		while (sigbus_pop_ao(&ev))
			handle_action_optional(vm, &ev);
	}
	while (sigbus_pop_ao(&ev))
		handle_action_optional(vm, &ev);
}

static int run_vcpus(struct vm *vm)
{
	unsigned int i;
	sigset_t block;

	/* Threads start with the kick signal blocked until they bind their state. */
	sigemptyset(&block);
	sigaddset(&block, SIG_VCPU_KICK);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	for (i = 0; i < vm->opt->nr_vcpus; i++)
		if (pthread_create(&vm->vcpus[i].thread, NULL, vcpu_thread, &vm->vcpus[i])) {
			fprintf(stderr, "hwlab-vmm: error: pthread_create failed\n");
			return -1;
		}
	return 0;
}

static void join_vcpus(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		pthread_join(vm->vcpus[i].thread, NULL);
		vm->vcpus[i].thread = 0;
	}
}

int main(int argc, char **argv)
{
	static struct vm vm;
	static char memmap_default[64];
	struct vmm_options opt;
	unsigned int i, done = 0, resets = 0;
	int ao_fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_options(argc, argv, &opt))
		return 2;
	if (vm_create(&vm, &opt) || vm_load_guest(&vm))
		return 1;
	for (i = 0; i < opt.nr_vcpus; i++)
		if (vcpu_create(&vm, i))
			return 1;
	ao_fd = sigbus_install(&vm.mem);
	if (ao_fd < 0) {
		fprintf(stderr, "hwlab-vmm: error: installing the SIGBUS handler: %s\n",
			strerror(errno));
		return 1;
	}
	/* Set on this thread only: it is the one the kernel sends AO to. */
	if (opt.mce_kill >= 0 && prctl(PR_MCE_KILL, PR_MCE_KILL_SET, opt.mce_kill, 0, 0)) {
		fprintf(stderr, "hwlab-vmm: error: prctl(PR_MCE_KILL): %s\n", strerror(errno));
		return 1;
	}
	{
		struct sigaction sa = { .sa_handler = on_stop_signal };

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	if (!opt.memmap_path) {
		snprintf(memmap_default, sizeof(memmap_default), HWLAB_MEMMAP_FMT, getpid());
		opt.memmap_path = memmap_default;
	}
	if (vm_write_memmap(&vm, opt.memmap_path))
		return 1;
	report("vmm_start", "\"pid\":%d,\"mem\":%llu,\"slots\":%u,\"backing\":\"%s\",\"vcpus\":%u,"
	       "\"hva\":\"%p\",\"mcg_cap\":\"%#llx\",\"mce_kill\":\"%s\"", getpid(),
	       (unsigned long long)opt.mem_size, opt.nr_slots, memslot_backing_name(opt.backing),
	       opt.nr_vcpus, (void *)vm.mem.slots[0].hva, (unsigned long long)HWLAB_MCG_CAP,
	       opt.mce_kill == PR_MCE_KILL_EARLY ? "early" :
	       opt.mce_kill == PR_MCE_KILL_LATE ? "late" : "sysctl");

	for (;;) {
		if (run_vcpus(&vm))
			return 1;
		monitor(&vm, ao_fd);
		join_vcpus(&vm);
		if (!vm.reset_requested)
			break;
		/* Reboot the guest on fresh memory for the poisoned pages. */
		resets++;
		vm.boot_count++;
		vm.stop = vm.reset_requested = 0;
		if (vm_remap_poisoned(&vm) || vm_load_guest(&vm))
			return 1;
		for (i = 0; i < opt.nr_vcpus; i++)
			if (vcpu_reset(&vm.vcpus[i]))
				return 1;
		report("reset", "\"boot\":%u", vm.boot_count);
	}
	/* A guest stopped on request (SIGTERM, --passes 0) counts as done. */
	for (i = 0; i < opt.nr_vcpus; i++)
		done += vm.vcpus[i].state == VCPU_DONE ||
			(stop_signal && vm.vcpus[i].state == VCPU_STOPPED);
	unlink(opt.memmap_path);
	report("vmm_exit", "\"status\":\"%s\",\"vcpus_done\":%u,\"injected\":%lu,"
	       "\"poisoned_pages\":%u,\"resets\":%u,\"ao_overflows\":%lu",
	       done == opt.nr_vcpus ? (stop_signal ? "stopped" : "ok") : "fail", done,
	       vm.injected, vm.poison.count, resets, sigbus_ao_overflows());
	return done == opt.nr_vcpus ? 0 : 1;
}
