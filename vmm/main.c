// SPDX-License-Identifier: GPL-2.0
/*
 * hwlab-vmm: a small KVM VMM that keeps its guest alive across host memory
 * errors. The kernel's memory-failure code sends it SIGBUS (BUS_MCEERR_AO
 * when it finds a bad page, BUS_MCEERR_AR when a vCPU consumes one); the VMM
 * maps si_addr to guest-physical memory and injects a machine check the
 * guest can recover from.
 *
 * This file is the main thread: set up, start the vCPU threads, then watch
 * for AO events and stop signals (it is the thread the kernel sends AO to),
 * reboot the guest when asked, and write the exit report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "clock.h"
#include "guest_ram.h"
#include "irqchip.h"
#include "kvm_dev.h"
#include "log.h"
#include "mce.h"
#include "options.h"
#include "report.h"
#include "vcpu.h"
#include "vm.h"
#include "x86_boot.h"

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static int all_vcpus_finished(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++)
		if (__atomic_load_n(&vm->vcpus[i].state, __ATOMIC_ACQUIRE) == VCPU_RUNNING)
			return 0;
	return 1;
}

/* What the SIGBUS handlers queued: AOs, and signals other processes sent. */
static void drain_sigbus_events(struct vm *vm)
{
	struct sigbus_event ev;

	while (sigbus_pop_event(&ev)) {
		if (ev.code == BUS_MCEERR_AO)
			mce_delivery_action_optional(vm, &ev);
		else
			report("foreign_signal", "\"signal\":\"SIGBUS\",\"si_code\":\"%s\","
			       "\"sender_pid\":%d,\"sender_uid\":%u,\"action\":\"ignore\","
			       "\"reason\":\"sent by a process, not a memory error: no address\"",
			       sigbus_code_name(ev.code), (int)ev.sender_pid,
			       (unsigned int)ev.sender_uid);
	}
}

/*
 * An AO deferred while the guest handled a machine check waits for the
 * vCPU's next exit; a guest that then computes without exiting would hold
 * it (and all behind it) for as long. Kick such vCPUs every poll period.
 */
static void kick_deferred(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++)
		mce_delivery_kick(&vm->vcpus[i], 1);
}

/*
 * A vCPU leaves KVM_RUN within microseconds of its kick; one that has not
 * after this long is stuck (in the kernel, where /proc says), and waiting
 * on would turn a stop into a hang.
 */
#define STOP_GRACE_NS	(10ULL * 1000 * 1000 * 1000)

/*
 * One field of /proc/self/task/TID/NAME by a scanf format that fills a char
 * array of at most 63 characters; "?" if the file or the field is missing.
 * A quote or backslash ends the text: it goes into a report line.
 */
static void task_field(int tid, const char *name, const char *fmt, char out[64])
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, name);
	f = fopen(path, "r");
	if (!f || fscanf(f, fmt, out) != 1)
		strcpy(out, "?");
	if (f)
		fclose(f);
	out[strcspn(out, "\"\\")] = 0;
	if (!out[0])
		strcpy(out, "?");
}

/* Each vCPU that still runs after the grace time, with where its thread is. */
static void report_stuck_vcpus(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		char wchan[64], state[64], syscall_nr[64];

		if (__atomic_load_n(&v->state, __ATOMIC_ACQUIRE) != VCPU_RUNNING)
			continue;
		task_field(v->tid, "wchan", "%63s", wchan);
		/* "tid (comm) S ...": the comm is ours (hwlab-vmm), no ')' inside */
		task_field(v->tid, "stat", "%*d (%*[^)]) %1s", state);
		task_field(v->tid, "syscall", "%63s", syscall_nr);
		report("vcpu_stuck", "\"vcpu\":%u,\"tid\":%d,\"in_kvm_run\":%d,\"state\":\"%s\","
		       "\"wchan\":\"%s\",\"syscall\":\"%s\",\"reason\":\"still running %llu s after the stop\"",
		       i, v->tid, (int)v->sig.in_kvm_run, state, wchan, syscall_nr,
		       STOP_GRACE_NS / 1000000000ULL);
	}
}

/*
 * Until every vCPU has finished: AO events and SIGTERM/SIGINT. Returns 0,
 * or -1 if a vCPU did not stop within STOP_GRACE_NS of the stop.
 */
static int monitor(struct vm *vm, int ao_fd)
{
	struct pollfd pfd = { .fd = ao_fd, .events = POLLIN };
	uint64_t stop_seen = 0;
	char drain[64];

	while (!all_vcpus_finished(vm)) {
		if (stop_signal && !vm->stop) {
			report("stop", "\"signal\":%d", (int)stop_signal);
			vm_stop(vm, 0);
		}
		if (vm->stop && !stop_seen) {
			stop_seen = monotonic_ns();
		} else if (vm->stop && monotonic_ns() - stop_seen > STOP_GRACE_NS) {
			report_stuck_vcpus(vm);
			return -1;
		}
		if (poll(&pfd, 1, 20) > 0) {
			while (read(ao_fd, drain, sizeof(drain)) > 0)
				;
		} else {
			kick_deferred(vm);
		}
		drain_sigbus_events(vm);
	}
	drain_sigbus_events(vm);
	return 0;
}

static int start_vcpus(struct vm *vm)
{
	unsigned int i;
	sigset_t block;
	int e;

	/* Threads start with the kick signal blocked until they bind their state. */
	sigemptyset(&block);
	sigaddset(&block, SIG_VCPU_KICK);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		pthread_t t;

		/*
		 * Not into vcpus[i].thread directly: a vCPU that already runs may
		 * kick every other one (vm_stop) before this one's id is stored.
		 */
		e = pthread_create(&t, NULL, vcpu_thread, &vm->vcpus[i]);
		if (e) {
			pr_err("pthread_create for vCPU %u: %s", i, strerror(e));
			return -1;
		}
		mce_delivery_thread_started(&vm->vcpus[i], t);
	}
	return 0;
}

static void join_vcpus(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		pthread_join(vm->vcpus[i].thread, NULL);
	}
}

/* Reboot the guest on fresh memory for the poisoned pages. */
static int reset_guest(struct vm *vm)
{
	unsigned int i;

	vm->boot_count++;
	vm->stop = vm->reset_requested = 0;
	if (guest_ram_remap_poisoned(vm) || guest_ram_refresh_boot_area(vm) ||
	    x86_boot_load_guest(vm))
		return -1;
	/* a reboot starts with the interrupt hardware as at power-on */
	if (vm->kind == GUEST_KIND_LINUX && irqchip_restore_vm(vm))
		return -1;
	for (i = 0; i < vm->opt->nr_vcpus; i++)
		if (vcpu_reset(&vm->vcpus[i]))
			return -1;
	report("reset", "\"boot\":%u", vm->boot_count);
	return 0;
}

static void uart_irq(void *ctx, int level)
{
	irqchip_set_line(ctx, UART_COM1_IRQ, level);
}

/*
 * The console's input: bytes go into the UART's receive FIFO as fast as the
 * guest takes them (a full FIFO waits a millisecond), until end of file.
 */
static void *console_input(void *arg)
{
	struct vm *vm = arg;
	uint8_t buf[256];
	ssize_t n;

	while ((n = read(vm->console_in_fd, buf, sizeof(buf))) != 0) {
		unsigned int done = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_errno("reading the console input");
			break;
		}
		while (done < n && !vm->stop) {
			unsigned int took = uart_receive(&vm->uart, buf + done, n - done);

			done += took;
			if (!took)
				usleep(1000);
		}
	}
	return NULL;
}

static int start_console_input(struct vm *vm, const char *path)
{
	pthread_t t;
	int e;

	vm->console_in_fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (vm->console_in_fd < 0) {
		pr_errno("cannot open the console input %s", path);
		return -1;
	}
	e = pthread_create(&t, NULL, console_input, vm);
	if (e) {
		pr_err("pthread_create for the console input: %s", strerror(e));
		return -1;
	}
	pthread_detach(t);
	return 0;
}

/* A Linux guest's files and console; 0, or -1 after a message. */
static int setup_linux(struct vm *vm, const struct vmm_options *opt)
{
	int fd = STDOUT_FILENO;

	if (opt->initrd_path && guest_image_read(&vm->initrd, opt->initrd_path))
		return -1;
	if (opt->console_path) {
		fd = open(opt->console_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0) {
			pr_errno("cannot open the console file %s", opt->console_path);
			return -1;
		}
	}
	uart_init(&vm->uart, fd, uart_irq, vm);
	vm->uart.stamp = opt->console_stamp;
	return 0;
}

/* After the VM exists: the UART's interrupt line goes to KVM. */
static int start_linux_console(struct vm *vm, const struct vmm_options *opt)
{
	return opt->console_in ? start_console_input(vm, opt->console_in) : 0;
}

/* The VM up to its first KVM_RUN: 0, or -1 after a message. */
static int setup(struct vm *vm, struct vmm_options *opt, int *ao_fd)
{
	/* SA_RESTART as in sigbus.c; poll(2) in the monitor still returns EINTR */
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };
	unsigned int i;

	if (guest_image_read(&vm->image, opt->kernel_path ? opt->kernel_path : opt->image_path) ||
	    (opt->kernel_path && setup_linux(vm, opt)) || vm_create(vm, opt) ||
	    x86_boot_load_guest(vm))
		return -1;
	for (i = 0; i < opt->nr_vcpus; i++)
		if (vcpu_create(vm, i))
			return -1;
	/* the PICs', I/O APIC's and PIT's power-on state, for a reboot */
	if (vm->kind == GUEST_KIND_LINUX && (irqchip_save_vm(vm) || start_linux_console(vm, opt)))
		return -1;
	*ao_fd = sigbus_install(&vm->mem);
	if (*ao_fd < 0) {
		pr_errno("installing the SIGBUS handler");
		return -1;
	}
	/* Set on this thread only: it is the one the kernel sends AO to. */
	if (opt->mce_kill >= 0 && prctl(PR_MCE_KILL, PR_MCE_KILL_SET, opt->mce_kill, 0, 0)) {
		pr_errno("prctl(PR_MCE_KILL)");
		return -1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* last: nothing after it can fail and leave the table behind */
	return guest_ram_publish(vm, opt->memmap_path);
}

int main(int argc, char **argv)
{
	static struct vm vm;
	struct vmm_options opt;
	unsigned int i, done = 0, resets = 0;
	int ao_fd, ok;

	log_prog = "hwlab-vmm";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (options_parse(argc, argv, &opt))
		return 2;
	if (opt.action == VMM_HELP) {
		options_usage(stdout);
		return 0;
	}
	if (opt.action == VMM_CHECK)
		return kvm_dev_check();
	if (setup(&vm, &opt, &ao_fd))
		return 1;
	report("vmm_start", "\"pid\":%d,\"guest\":\"%s\",\"vendor\":\"%s\",\"mce_encoding\":\"%s\","
	       "\"mca_broadcast\":%s,"
	       "\"mem\":%llu,\"slots\":%u,\"backing\":\"%s\",\"vcpus\":%u,"
	       "\"hva\":\"%p\",\"mcg_cap\":\"%#llx\",\"mce_kill\":\"%s\",\"memmap\":\"%s\","
	       "\"stale_tables_removed\":%u,\"ram_named\":%s",
	       getpid(), vm.kind == GUEST_KIND_LINUX ? "linux" : "hwlab",
	       cpuid_vendor_name(vm.vendor), (vm.mce_style & MCE_STYLE_AMD) ? "amd" : "intel",
	       (vm.mce_style & MCE_STYLE_BROADCAST) ? "true" : "false",
	       (unsigned long long)opt.mem_size, opt.nr_slots, memslot_backing_name(opt.backing),
	       opt.nr_vcpus, (void *)vm.mem.slots[0].hva, (unsigned long long)HWLAB_MCG_CAP,
	       options_mce_kill_name(opt.mce_kill), guest_ram_published_path(),
	       guest_ram_stale_removed(), guest_ram_named() ? "true" : "false");

	for (;;) {
		if (start_vcpus(&vm))
			return 1;
		if (monitor(&vm, ao_fd)) {
			/* not joined: exit() ends the stuck threads with the process */
			guest_ram_unpublish();
			report("vmm_exit", "\"status\":\"stuck\",\"reason\":\"a vCPU did not stop; "
			       "see the vcpu_stuck lines\"");
			return 1;
		}
		join_vcpus(&vm);
		/* what arrived after the monitor's last look: reported, not lost */
		drain_sigbus_events(&vm);
		if (!vm.reset_requested)
			break;
		resets++;
		if (reset_guest(&vm))
			return 1;
	}
	/* A guest stopped on request (SIGTERM, --passes 0) counts as done. */
	for (i = 0; i < opt.nr_vcpus; i++)
		done += vm.vcpus[i].state == VCPU_DONE ||
			(stop_signal && vm.vcpus[i].state == VCPU_STOPPED);
	ok = done == opt.nr_vcpus;
	/* before vmm_exit: a script that saw that line finds the table gone */
	guest_ram_unpublish();
	if (vm.kind == GUEST_KIND_LINUX)
		uart_flush(&vm.uart);
	report("vmm_exit", "\"status\":\"%s\",\"vcpus_done\":%u,\"injected\":%lu,"
	       "\"poisoned_pages\":%u,\"resets\":%u,\"ao_overflows\":%lu,\"ao_not_delivered\":%lu,"
	       "\"io_ignored\":%lu",
	       ok ? (stop_signal ? "stopped" : "ok") : "fail", done, mce_delivery_injected(&vm),
	       mce_delivery_poisoned_pages(&vm), resets, sigbus_ao_overflows(),
	       mce_delivery_not_delivered(&vm), vm.io_seen.ignored);
	return ok ? 0 : 1;
}
