// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the whole restore of a snapshot or an incoming migration,
 * stream_in_open() and snapshot_restore_state() as --restore and
 * --incoming call them, on any bytes (in a memfd, read through the
 * stream's own read()s). Every section's parser runs for real: config,
 * vm, devices (the Linux guest's irqchip, CMOS, PCI, UART records), each
 * vCPU's pieces (vcpu_state.c), poison (with mce_delivery's list), RAM
 * (ram.c into guest memory) and poison_keep() (a real userfaultfd). What
 * is not real is KVM: the VM is a struct vm built here the way
 * machine_setup() builds one, with guest RAM as anonymous memory and its
 * KVM fds answered by fake_kvm.c. Not covered: the socket side of
 * --incoming (migration.c), KVM's own checks of the values set.
 *
 * Two machines, picked by the input's first section (a config naming the
 * "linux" kind: the Linux guest's, else the bare-metal one). The custom
 * mutator (stream_mutator.c) keeps the CRCs right.
 *
 * HWLAB_FUZZ_WRITE_SEEDS=DIR: write valid streams of both machines into
 * DIR, as snapshot_save_state() writes them, check that each restores, and
 * exit (tests/fuzz/seeds.sh).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "boot/guest_boot.h"
#include "core/vm.h"
#include "mce/mce.h"
#include "mce/mce_delivery.h"
#include "migrate/snapshot.h"
#include "migrate/stream.h"
#include "pc/cmos_rtc.h"
#include "pc/console.h"
#include "pc/debug_ports.h"
#include "pc/i8042.h"
#include "pc/irqchip.h"
#include "pc/pci_conf1.h"
#include "fake_kvm.h"
#include "stream_mutator.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MIB		(1ull << 20)
#define PAGE		4096ull

struct fake_machine {
	struct vm vm;
	struct vmm_options opt;
	struct guest_kind kind;
	struct guest_state guest;
	uint8_t image[64];
};

static struct fake_machine machines[2];
static int input_fd = -1;
/* HWLAB_FUZZ_STATS: how many inputs had every CRC right, and how many restored */
static unsigned long runs, crcs_right, restored;

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-stream-restore: setting up %s failed\n", what);
		abort();
	}
}

/* Guest RAM as fresh anonymous memory at the slot's address: zeros, no marker left. */
static void ram_fresh(struct memslot *s)
{
	void *p = mmap(s->hva, s->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (s->hva ? MAP_FIXED : 0), -1, 0);

	must(p != MAP_FAILED, "guest RAM");
	s->hva = p;
}

/*
 * As machine_setup() makes it, KVM aside. 0: the bare-metal guest, two
 * vCPUs, RAM in two slots with a hole; 1: a Linux guest on AMD with SMCA,
 * one vCPU, its PC devices.
 */
static void machine_make(unsigned int which)
{
	struct fake_machine *m = &machines[which];
	struct vm *vm = &m->vm;
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->kind.name = which ? "linux" : "hwlab";
	snprintf((char *)m->image, sizeof(m->image), "the %s guest's image", m->kind.name);
	m->guest.image = (struct guest_image) { .path = "image", .data = m->image,
						.size = sizeof(m->image) };
	m->opt.nr_vcpus = which ? 1 : 2;
	m->opt.backing = BACKING_ANON;
	vm->opt = &m->opt;
	vm->kind = &m->kind;
	vm->guest = &m->guest;
	vm->kvm_fd = fake_kvm_fd(which);
	vm->vm_fd = fake_kvm_fd(which);
	vm->vendor = which ? CPU_VENDOR_AMD : CPU_VENDOR_INTEL;
	vm->mce_style = which ? MCE_STYLE_AMD | MCE_STYLE_SMCA | MCE_STYLE_PAGE_LSB : 0;
	vm->mce_banks = which ? 6 : 10;
	vm->boot_count = 1;
	guest_poison_init(&vm->poisoned);
	device_bus_init(&vm->devices);
	must(!mce_delivery_init_vm(vm), "the machine-check state");
	vm->mem.count = which ? 1 : 2;
	/* small: a restore reads every page's record */
	vm->mem.slots[0] = (struct memslot) { .id = 0, .gpa = 0, .size = MIB };
	vm->mem.slots[1] = (struct memslot) { .id = 1, .gpa = 0x100000000ull, .size = 64 * 1024 };
	for (i = 0; i < vm->mem.count; i++) {
		ram_fresh(&vm->mem.slots[i]);
		m->opt.mem_size += vm->mem.slots[i].size;
	}
	if (which) {
		must(!irqchip_create(vm) && !debug_ports_register(vm) && !i8042_register(vm) &&
		     !cmos_rtc_register(vm) && !pci_conf1_register(vm) &&
		     !console_open(vm, "/dev/null", NULL, 0) && !console_register(vm), "devices");
	}
	for (i = 0; i < m->opt.nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		v->vm = vm;
		v->id = i;
		v->fd = fake_kvm_fd(which);
		must(!mce_delivery_init_vcpu(v), "a vCPU's machine-check state");
	}
}

/* As it was made: RAM zero and unmarked, no poison heard or told, first boot. */
static void machine_reset(struct fake_machine *m)
{
	struct poison_list l;
	unsigned int i;

	for (i = 0; i < m->vm.mem.count; i++)
		ram_fresh(&m->vm.mem.slots[i]);
	guest_poison_take(&m->vm.poisoned, &l);
	poison_list_free(&l);
	mce_delivery_forget_notified(&m->vm);
	m->vm.boot_count = 1;
}

/* Which machine the stream is for: the kind its first section names. */
static struct fake_machine *machine_for(const uint8_t *data, size_t size)
{
	return size >= 32 + 5 && !memcmp(data + 32, "linux", 5) ? &machines[1] : &machines[0];
}

/* The restore, as --restore runs it. 0 if the guest could start. */
static int restore(const uint8_t *data, size_t size)
{
	struct fake_machine *m = machine_for(data, size);
	struct restore_result r;
	struct stream s;
	unsigned int i;
	int ret = -1;

	machine_reset(m);
	if (ftruncate(input_fd, 0) || pwrite(input_fd, data, size, 0) != (ssize_t)size ||
	    lseek(input_fd, 0, SEEK_SET))
		abort();
	memset(&r, 0, sizeof(r));
	if (!stream_in_open(&s, input_fd, "the input") && !snapshot_restore_state(&m->vm, &s, &r)) {
		ret = 0;
		/* what the guest is owed an AO for is a page of its RAM */
		for (i = 0; i < r.to_tell.count; i++)
			if (!memslot_gpa_to_hva(&m->vm.mem, r.to_tell.gpas[i], PAGE))
				abort();
	}
	poison_list_free(&r.to_tell);
	return ret;
}

/* RAM with something in it: a few pages of data, the rest zero. */
static void fill_ram(struct vm *vm)
{
	static const uint64_t gpas[] = { 0x2000, 0x100000000ull };
	unsigned int i;

	for (i = 0; i < sizeof(gpas) / sizeof(gpas[0]); i++) {
		uint8_t *hva = memslot_gpa_to_hva(&vm->mem, gpas[i], PAGE);

		if (hva)
			memset(hva, 0x41 + i, PAGE);
	}
}

static void write_seed(const char *dir, unsigned int which, int poisoned)
{
	struct fake_machine *m = &machines[which];
	struct snapshot_stats st = { 0 };
	char path[4096];
	struct stream s;
	uint8_t *bytes;
	off_t len;
	int fd = memfd_create("seed", MFD_CLOEXEC);
	FILE *f;

	machine_reset(m);
	fill_ram(&m->vm);
	if (poisoned) {
		/* one page heard and not told, one heard and told, one told only */
		must(guest_poison_add(&m->vm.poisoned, 0x5000, PAGE) >= 0 &&
		     guest_poison_add(&m->vm.poisoned, 0x7000, PAGE) >= 0 &&
		     !mce_delivery_mark_told(&m->vm, 0x7000, PAGE) &&
		     !mce_delivery_mark_told(&m->vm, 0x9000, PAGE), "the seed's poison");
	}
	must(fd >= 0 && !stream_out_open(&s, fd, "seed") &&
	     !snapshot_save_state(&m->vm, &s, &st) && !stream_out_close(&s), "a seed stream");
	len = lseek(fd, 0, SEEK_END);
	bytes = malloc(len);
	must(bytes && pread(fd, bytes, len, 0) == len, "reading the seed back");
	snprintf(path, sizeof(path), "%s/%s%s", dir, m->kind.name, poisoned ? "-poisoned" : "");
	f = fopen(path, "w");
	must(f && fwrite(bytes, 1, len, f) == (size_t)len && !fclose(f), path);
	/* a seed that does not restore would start the fuzzer on refusals only */
	must(!restore(bytes, len), "restoring the seed just written");
	printf("%s: %lld bytes, %u sections\n", path, (long long)len, s.sections);
	free(bytes);
	close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("HWLAB_FUZZ_WRITE_SEEDS");

	(void)argc;
	(void)argv;
	machine_make(0);
	machine_make(1);
	input_fd = memfd_create("input", MFD_CLOEXEC);
	must(input_fd >= 0, "the input's memfd");
	if (seeds) {
		write_seed(seeds, 0, 0);
		write_seed(seeds, 0, 1);
		write_seed(seeds, 1, 0);
		write_seed(seeds, 1, 1);
		exit(0);
	}
	return 0;
}

static void print_stats(void)
{
	printf("fuzz-stream-restore: %lu inputs, %lu with every CRC right, %lu restored\n",
		runs, crcs_right, restored);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int ok = !restore(data, size);

	if (getenv("HWLAB_FUZZ_STATS")) {
		if (!runs++)
			atexit(print_stats);
		crcs_right += stream_input_crcs_right(data, size);
		restored += ok;
	}
	return 0;
}
