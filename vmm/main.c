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
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot/guest_boot.h"
#include "clock.h"
#include "core/guest_ram.h"
#include "core/kvm_dev.h"
#include "core/report.h"
#include "core/vm.h"
#include "log.h"
#include "machine.h"
#include "mce/mce.h"
#include "mce/mce_delivery.h"
#include "migrate/migration.h"
#include "migrate/snapshot.h"
#include "options.h"
#include "pc/console.h"
#include "vcpu.h"
#include "vcpu_stuck.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * At exit, the report and console writers get this long to write what is
 * queued: a stop must end even when nobody reads stdout or the console.
 */
#define FINAL_FLUSH_NS		(2ULL * 1000 * 1000 * 1000)
/* Exit status when stdout, the report channel, failed (EPIPE, EFBIG). */
#define EXIT_REPORT_CLOSED	4

static volatile sig_atomic_t stop_signal;
/* --snapshot or --migrate-to: SIGUSR2 asks for one (the monitor does it) */
static volatile sig_atomic_t snapshot_signal;
/* the guest went to the --migrate-to destination: this VMM stops */
static int migrated;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void on_snapshot_signal(int sig)
{
	snapshot_signal = sig;
}

/*
 * Signals whose default action dumps core: the VMM is ending abnormally
 * (a fault of its own, or kill -QUIT/-ABRT). What was installed before us
 * (a sanitizer's report), or else the default, takes over again.
 */
static const int core_signals[] = {
	SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGSEGV, SIGSYS, SIGXCPU,
};
/* Signals that do not end a process by default, or are handled elsewhere. */
static const int not_stop_signals[] = {
	SIGKILL, SIGSTOP, SIGCHLD, SIGCONT, SIGURG, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU,
	SIGBUS,		/* sigbus.c: memory errors */
	SIG_VCPU_KICK,	/* sigbus.c: the vCPU kick */
	SIGPIPE,	/* ignored: a closed stdout is EPIPE, seen by the report writer */
	SIGXFSZ,	/* ignored: a file over RLIMIT_FSIZE is EFBIG to its writer */
};
static struct sigaction core_previous[NSIG];

static int in_list(int sig, const int *list, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (list[i] == sig)
			return 1;
	return 0;
}

/*
 * Async-signal-safe: remove the memslot table (a table left behind names
 * memory that is no longer this VMM's), then end as the signal would have:
 * the previous handler or the default action, raised again. For a fault the
 * instruction also faults again on return.
 */
static void on_core_signal(int sig)
{
	int saved = errno;

	guest_ram_unpublish();
	sigaction(sig, &core_previous[sig], NULL);
	raise(sig);
	errno = saved;
}

/*
 * Every signal whose default action would end the VMM: none may leave the
 * memslot table behind. The graceful ones (SIGTERM, SIGINT, SIGHUP,
 * SIGALRM, SIGUSR2, the realtime signals, ...) stop the guest as SIGTERM
 * does; SIGPIPE and SIGXFSZ are ignored (a write to a closed stdout returns
 * EPIPE, one over the file size limit EFBIG, and the VMM stops:
 * report_channel_broken(); a guest that floods its console file past the
 * limit only loses console lines); the core-dumping ones remove
 * the table and end the process as they would have. Whatever the VMM
 * inherited (a background job's ignored SIGINT) is replaced: a stop signal
 * must stop it. SA_RESTART as in sigbus.c; poll(2) in the monitor still
 * returns EINTR.
 */
static void install_stop_signals(const struct vmm_options *opt)
{
	struct sigaction stop = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };
	struct sigaction core = { .sa_handler = on_core_signal, .sa_flags = SA_RESTART };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	int sig;

	sigemptyset(&stop.sa_mask);
	sigemptyset(&core.sa_mask);
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, NULL);
	sigaction(SIGXFSZ, &ign, NULL);
	for (sig = 1; sig <= SIGRTMAX; sig++) {
		if (in_list(sig, not_stop_signals, ARRAY_LEN(not_stop_signals)))
			continue;
		/* 32 and 33 are the C library's own: sigaction() refuses them */
		if (sig > SIGSYS && sig < SIGRTMIN)
			continue;
		if (sig == SIGUSR2 && (opt->snapshot_path || opt->migrate_to)) {
			struct sigaction snap = { .sa_handler = on_snapshot_signal,
						  .sa_flags = SA_RESTART };

			sigemptyset(&snap.sa_mask);
			sigaction(sig, &snap, NULL);
		} else if (!in_list(sig, core_signals, ARRAY_LEN(core_signals))) {
			sigaction(sig, &stop, NULL);
		} else if (!sigaction(sig, &core, &core_previous[sig]) &&
			   (core_previous[sig].sa_handler == SIG_IGN ||
			    core_previous[sig].sa_handler == SIG_DFL)) {
			/* an inherited SIG_IGN would make the raise a no-op: the default */
			core_previous[sig] = (struct sigaction) { .sa_handler = SIG_DFL };
		}
	}
}

/* Why the guest is being stopped from outside, or 0. */
static int stop_requested(void)
{
	return stop_signal || report_channel_broken();
}

static int all_vcpus_finished(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++)
		if (__atomic_load_n(&vm->vcpus[i].state, __ATOMIC_ACQUIRE) == VCPU_RUNNING)
			return 0;
	return 1;
}

/*
 * SIGBUS that processes sent: the first SIGBUS_FOREIGN_KEPT get a line each,
 * the rest a summary at most once per FOREIGN_SUMMARY_NS (and at the end),
 * so that a flood of kill -BUS cannot flood the report too.
 */
#define FOREIGN_SUMMARY_NS	(1000ULL * 1000 * 1000)

static struct {
	unsigned long lines;		/* foreign_signal lines written */
	unsigned long summarized;	/* of the rest, counted in a summary */
	uint64_t t_summary;
} foreign_seen;

static void report_foreign_signals(int flush)
{
	unsigned long n = sigbus_foreign_count(), rest;
	struct sigbus_event ev;
	uint64_t now;

	while (foreign_seen.lines < SIGBUS_FOREIGN_KEPT &&
	       sigbus_foreign_kept(foreign_seen.lines, &ev)) {
		report("foreign_signal", "\"signal\":\"SIGBUS\",\"si_code\":\"%s\","
		       "\"sender_pid\":%d,\"sender_uid\":%u,\"action\":\"ignore\","
		       "\"reason\":\"sent by a process, not a memory error: no address\"",
		       sigbus_code_name(ev.code), (int)ev.sender_pid, (unsigned int)ev.sender_uid);
		foreign_seen.lines++;
	}
	rest = n > SIGBUS_FOREIGN_KEPT ? n - SIGBUS_FOREIGN_KEPT : 0;
	now = monotonic_ns();
	if (rest == foreign_seen.summarized || !sigbus_foreign_last(&ev) ||
	    (!flush && now - foreign_seen.t_summary < FOREIGN_SUMMARY_NS))
		return;
	report("foreign_signal_summary", "\"signal\":\"SIGBUS\",\"count\":%lu,\"new\":%lu,"
	       "\"last_si_code\":\"%s\",\"last_sender_pid\":%d,\"last_sender_uid\":%u,"
	       "\"action\":\"ignore\",\"reason\":\"after the first %d, sent signals are only "
	       "counted\"", n, rest - foreign_seen.summarized, sigbus_code_name(ev.code),
	       (int)ev.sender_pid, (unsigned int)ev.sender_uid, SIGBUS_FOREIGN_KEPT);
	foreign_seen.summarized = rest;
	foreign_seen.t_summary = now;
}

/*
 * What the SIGBUS handlers left: AOs, and signals other processes sent.
 * flush: the run ends, so a summary that waits for its period is due now.
 */
static void drain_sigbus_events(struct vm *vm, int flush)
{
	struct sigbus_event ev;

	while (sigbus_pop_event(&ev))
		mce_delivery_action_optional(vm, &ev);
	report_foreign_signals(flush);
}

/* For a migration's rounds: what the kernel sent meanwhile. */
static void drain_events(struct vm *vm)
{
	drain_sigbus_events(vm, 0);
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
		mce_delivery_kick_if_queued(&vm->vcpus[i]);
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
		if (stop_requested() && !vm->stop) {
			if (stop_signal)
				report("stop", "\"signal\":%d", (int)stop_signal);
			/* else nobody would read a stop line: stdout is closed */
			vm_stop(vm, 0);
		}
		if (snapshot_signal && !vm->stop) {
			snapshot_signal = 0;
			/* a failure is reported; the guest runs on either way */
			if (vm->opt->snapshot_path) {
				drain_sigbus_events(vm, 0);
				snapshot_take(vm, vm->opt->snapshot_path);
			} else if (migration_send(vm, vm->opt->migrate_to, drain_events,
						  stop_requested) == 1) {
				migrated = 1;
				vm_stop(vm, 0);
			}
		}
		if (vm->stop && !stop_seen) {
			stop_seen = monotonic_ns();
		} else if (vm->stop && monotonic_ns() - stop_seen > STOP_GRACE_NS) {
			report_stuck_vcpus(vm);
			return -1;
		}
		/*
		 * A lost huge page's next batch goes when the guest is seen
		 * idle (kick_deferred(): KVM's statistic, or a kick): look
		 * more often meanwhile (17 batches a 2 MiB, up to a period's
		 * wait each).
		 */
		if (poll(&pfd, 1, mce_delivery_spreading(vm) ? 2 : 20) > 0) {
			while (read(ao_fd, drain, sizeof(drain)) > 0)
				;
		} else {
			kick_deferred(vm);
		}
		drain_sigbus_events(vm, 0);
	}
	drain_sigbus_events(vm, 0);
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
		vcpu_thread_started(&vm->vcpus[i].thread, t);
	}
	return 0;
}

static void join_vcpus(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		pthread_join(vm->vcpus[i].thread.id, NULL);
	}
}

/*
 * --incoming: listen, wait for the source (a stop signal ends the wait),
 * restore from it. 0 to start the guest, or -1 after a message.
 */
static int receive_incoming(struct vm *vm, struct restore_result *r)
{
	const char *to = vm->opt->incoming;
	struct migration_listener l;
	char qto[512];
	int conn, ret;

	if (migration_listen(to, &l))
		return -1;
	json_escape(qto, sizeof(qto), to);
	report("incoming", "\"status\":\"listening\",\"at\":\"%s\"", qto);
	conn = migration_accept(&l, stop_requested);
	migration_unlink(&l);
	if (conn < 0)
		return -1;
	ret = migration_receive(vm, conn, to, r, stop_requested);
	close(conn);
	return ret;
}

/*
 * atexit(), after the table's removal: what the writers still hold gets
 * FINAL_FLUSH_NS to go out, then the process ends whatever its readers do.
 */
static void flush_outputs(void)
{
	uint64_t deadline = monotonic_ns() + FINAL_FLUSH_NS;

	report_drain(deadline);
	console_drain(deadline);
}

int main(int argc, char **argv)
{
	static struct vm vm;
	static struct restore_result restored;
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
	/* before anything that the table's removal or a report depends on */
	install_stop_signals(&opt);
	if (report_start())
		return 1;
	atexit(flush_outputs);
	if (machine_setup(&vm, &opt, &ao_fd, stop_requested))
		return 1;
	report("vmm_start", "\"pid\":%d,\"guest\":\"%s\",\"vendor\":\"%s\",\"mce_encoding\":\"%s\","
	       "\"mca_broadcast\":%s,"
	       "\"mem\":%llu,\"slots\":%u,\"backing\":\"%s\",\"vcpus\":%u,"
	       "\"hva\":\"%p\",\"mcg_cap\":\"%#llx\",\"mce_kill\":\"%s\",\"memmap\":\"%s\","
	       "\"stale_tables_removed\":%u,\"ram_named\":%s,\"xsetbv_exits\":%s,"
	       "\"xsave_components\":\"%#llx\"",
	       getpid(), vm.kind->name,
	       cpuid_vendor_name(vm.vendor), (vm.mce_style & MCE_STYLE_AMD) ? "amd" : "intel",
	       (vm.mce_style & MCE_STYLE_BROADCAST) ? "true" : "false",
	       (unsigned long long)opt.mem_size, opt.nr_slots, memslot_backing_name(opt.backing),
	       opt.nr_vcpus, (void *)vm.mem.slots[0].hva, (unsigned long long)(HWLAB_MCG_CAP_FLAGS | vm.mce_banks),
	       options_mce_kill_name(opt.mce_kill), guest_ram_published_path(),
	       guest_ram_stale_removed(), guest_ram_named() ? "true" : "false",
	       vm.xsetbv_exits < 0 ? "null" : vm.xsetbv_exits ? "true" : "false",
	       vm.xsave_components);

	/* the state replaces what booting put there; the guest starts only if it came whole */
	if (opt.restore_path && snapshot_restore_file(&vm, opt.restore_path, &restored)) {
		guest_ram_unpublish();
		report("vmm_exit", "\"status\":\"fail\",\"reason\":\"--restore refused the "
		       "snapshot\"");
		return 1;
	}
	if (opt.incoming && receive_incoming(&vm, &restored)) {
		guest_ram_unpublish();
		report("vmm_exit", "\"status\":\"fail\",\"reason\":\"--incoming took no guest\"");
		return 1;
	}
	for (;;) {
		if (start_vcpus(&vm))
			return 1;
		if ((opt.restore_path || opt.incoming) && !resets)
			snapshot_tell_owed(&vm, &restored);
		if (monitor(&vm, ao_fd)) {
			/* not joined: exit() ends the stuck threads with the process */
			guest_ram_unpublish();
			report("vmm_exit", "\"status\":\"stuck\",\"reason\":\"a vCPU did not stop; "
			       "see the vcpu_stuck lines\"");
			return 1;
		}
		join_vcpus(&vm);
		/* what arrived after the monitor's last look: reported, not lost */
		drain_sigbus_events(&vm, 1);
		if (!vm.reset_requested)
			break;
		resets++;
		if (machine_reset(&vm))
			return 1;
	}
	/* A guest stopped on request (SIGTERM, --passes 0) counts as done. */
	for (i = 0; i < opt.nr_vcpus; i++)
		done += vm.vcpus[i].state == VCPU_DONE ||
			((stop_requested() || migrated) && vm.vcpus[i].state == VCPU_STOPPED);
	ok = done == opt.nr_vcpus;
	/* before vmm_exit: a script that saw that line finds the table gone */
	guest_ram_unpublish();
	guest_kind_finish(&vm);
	report("vmm_exit", "\"status\":\"%s\",\"vcpus_done\":%u,\"injected\":%lu,"
	       "\"poisoned_pages\":%u,\"resets\":%u,\"ao_overflows\":%lu,\"ao_not_delivered\":%lu,"
	       "\"io_ignored\":%lu,\"foreign_signals\":%lu,\"report_dropped\":%lu,\"console_dropped\":%lu",
	       migrated ? "migrated" : ok ? (stop_requested() ? "stopped" : "ok") : "fail", done, mce_delivery_injected(&vm),
	       guest_poison_count(&vm.poisoned), resets, sigbus_ao_overflows(),
	       mce_delivery_not_delivered(&vm), vm.devices.seen.ignored, sigbus_foreign_count(),
	       report_dropped_lines(), console_dropped());
	/* no vmm_exit line reached anyone: the exit status is all that is left to say */
	if (report_channel_broken())
		return EXIT_REPORT_CLOSED;
	return ok ? 0 : 1;
}
