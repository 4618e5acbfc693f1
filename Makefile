# hwpoison-lab: HWPOISON recovery for KVM guests, end to end.
#   make deps   install the build's Debian packages (apt-get)
#   make        VMM, guest, test programs (host side, no VM)
#   make test   host unit tests + outer-VM integration scenarios
#   make unit   the host unit tests alone (UNIT='mce_*' for some)
#   make test-loaded  the same beside a CPU hog on every core
#   make soak N=1000  N poison events in one run: latency median/p99/max
#   make linux-latency  the Linux guest: boot time, LINUX_EVENTS (20) events' latency
#   make demo   boot the outer VM and tell the recovery story (bare-metal and Linux guests)
#   make compare  the same Linux guest and poison in QEMU and in hwlab-vmm: one table
#   make guest-matrix  Debian's stock kernels and ours as guests: boot, every case, default poll
#   make asan   unit tests and VMM runs under ASan+UBSan (build/asan); part of make test
#   make fuzz   libFuzzer on the ELF loader, ucall decoder, bzImage, stream restore, --watch requests
#   make test-debug-kernel  the kernel-facing scenarios on a lockdep/DEBUG_VM kernel
#   make host-kernel HOST=sid  another outer kernel: 6.1, 6.12, 7.2 (ours), bookworm, trixie, sid (stock)
#   make cell HOST=sid CASE=late_kill  one cell of the host matrix, into build/cells/HOST/CASE.json
#   make host-matrix  every case on every host kernel (HOSTS=, CASES= narrow it), merged into one table
#   make upstream-selftests  upstream's own mm (6.1, 6.12, 7.2) and KVM (6.12, 7.2) selftests on the outer kernel
CC      ?= gcc
BUILD   := build
CFLAGS  := -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude -Ivmm
# The guest is freestanding: no libc, no SSE, no red zone (exceptions push on
# the interrupted stack), linked at its load address.
GUEST_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude -ffreestanding \
	-fno-pic -fno-pie -fno-stack-protector -mno-red-zone -mgeneral-regs-only \
	-fno-asynchronous-unwind-tables -fcf-protection=none
GUEST_LDFLAGS := -nostdlib -static -no-pie -Wl,-T,guest/guest.ld -Wl,--build-id=none -Wl,--no-warn-rwx-segments

# lib/: hosted code the VMM and the tools share (messages, clock, numbers,
# the option-table engine, the memslot table format, pagemap and the
# debugfs injectors).
LIB_SRCS := $(wildcard lib/*.c)
# vmm/ without main.c is a library too: the unit tests link the same objects.
# Its folders are layers by concern (docs/design.md, tests/host/layering.sh).
VMM_SRCS := $(filter-out vmm/main.c,$(wildcard vmm/*.c vmm/*/*.c))
UNIT_SRCS := $(wildcard tests/unit/*.c)
OUTER_BINS := $(BUILD)/hwlab-vmm $(BUILD)/madvise_sigbus $(BUILD)/hugetlb_read $(BUILD)/page_states \
	$(BUILD)/static/hwpoison-guest $(BUILD)/uffd_poison \
	$(BUILD)/corrupt_va_probe $(BUILD)/thread_stop $(BUILD)/hwlab-stamp \
	$(BUILD)/json-field $(BUILD)/pagemap-pfn $(BUILD)/kvm_hold
SCENARIOS := $(wildcard tests/integration/scenarios/*.sh)
OBJ := $(BUILD)/obj
# Sanitizer flags for compiling and linking; set by the asan and fuzz targets,
# which rerun these rules with their own BUILD.
SAN_FLAGS :=
# hwlab-vmm is static (the outer VM's initramfs has no libc); ASan cannot be.
VMM_STATIC := -static
# -I.: lib/options.h by its folder (vmm/ has an options.h of its own)
HOST_CFLAGS := $(CFLAGS) -I. -Ilib -MMD -MP $(SAN_FLAGS)

all: $(BUILD)/hwlab-vmm $(BUILD)/guest.elf $(BUILD)/inner-initramfs.cpio.gz \
	$(BUILD)/inner-initramfs-stock.cpio.gz \
	$(BUILD)/unit-tests $(BUILD)/madvise_sigbus $(BUILD)/hugetlb_read $(BUILD)/uffd_poison \
	$(BUILD)/page_states $(BUILD)/hwpoison-guest $(BUILD)/static/hwpoison-guest \
	$(BUILD)/corrupt_va_probe $(BUILD)/thread_stop $(BUILD)/hwlab-stamp \
	$(BUILD)/json-field $(BUILD)/pagemap-pfn $(BUILD)/kvm_hold

$(BUILD):
	mkdir -p $@

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -pthread -c -o $@ $<

$(BUILD)/libhwlab.a: $(LIB_SRCS:%.c=$(OBJ)/%.o)
	$(AR) rcs $@ $^

$(BUILD)/libvmm.a: $(VMM_SRCS:%.c=$(OBJ)/%.o)
	$(AR) rcs $@ $^

# Static: the outer VM's initramfs has no libc.
$(BUILD)/hwlab-vmm: $(OBJ)/vmm/main.o $(BUILD)/libvmm.a $(BUILD)/libhwlab.a
	$(CC) $(VMM_STATIC) $(SAN_FLAGS) -pthread -o $@ $^

$(BUILD)/unit-tests: $(UNIT_SRCS:%.c=$(OBJ)/%.o) $(OBJ)/tools/memory_failure_event.o \
		$(OBJ)/tools/hwpoison_guest_options.o $(OBJ)/tools/hwpoison_guest_soak_line.o \
		$(BUILD)/libvmm.a $(BUILD)/libhwlab.a
	$(CC) $(SAN_FLAGS) -pthread -o $@ $^

$(OBJ)/tests/unit/%.o: HOST_CFLAGS += -Itests/unit -Itools

# hwpoison-guest as users run it, with libvirt (--domain, --watch): the
# host's tool and the comparison image's. The outer VM's base image has no
# libc, so it gets a static build without libvirt (QMP and hwlab-vmm only).
LIBVIRT_CFLAGS := $(shell pkg-config --cflags libvirt libvirt-qemu 2>/dev/null)
LIBVIRT_LIBS := $(shell pkg-config --libs libvirt libvirt-qemu 2>/dev/null || echo -lvirt -lvirt-qemu)
# The tool's parts (tools/hwpoison_guest.h): both builds link these; main()
# is compiled for each, the libvirt part only into the libvirt build.
HWPOISON_GUEST_OBJS := $(patsubst %,$(OBJ)/tools/hwpoison_guest_%.o,options target page inject soak soak_line)
$(OBJ)/tools/hwpoison-guest.o $(OBJ)/tools/hwpoison_guest_libvirt.o $(OBJ)/tools/libvirt_domain.o \
		$(OBJ)/tools/libvirt_watch.o: \
	HOST_CFLAGS += -DHWLAB_LIBVIRT $(LIBVIRT_CFLAGS)
$(BUILD)/hwpoison-guest: $(OBJ)/tools/hwpoison-guest.o $(OBJ)/tools/hwpoison_guest_libvirt.o \
		$(OBJ)/tools/libvirt_domain.o $(OBJ)/tools/libvirt_watch.o $(OBJ)/tools/memory_failure_event.o \
		$(HWPOISON_GUEST_OBJS) $(BUILD)/libhwlab.a
	$(CC) -o $@ $^ $(LIBVIRT_LIBS)

$(OBJ)/static/tools/hwpoison-guest.o: tools/hwpoison-guest.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -c -o $@ $<
$(BUILD)/static/hwpoison-guest: $(OBJ)/static/tools/hwpoison-guest.o $(HWPOISON_GUEST_OBJS) \
		$(BUILD)/libhwlab.a
	@mkdir -p $(dir $@)
	$(CC) -static -o $@ $^

$(BUILD)/hwlab-stamp: $(OBJ)/tools/hwlab-stamp.o $(BUILD)/libhwlab.a
	$(CC) -static -o $@ $^

# The checks' two readers, a report line's member and a page's PFN: static,
# as the outer VM (which has no python) runs them too.
$(BUILD)/json-field: $(OBJ)/tools/json-field.o $(BUILD)/libhwlab.a
	$(CC) -static -o $@ $^

$(BUILD)/pagemap-pfn: $(OBJ)/tools/pagemap-pfn.o $(BUILD)/libhwlab.a
	$(CC) -static -o $@ $^

$(BUILD)/madvise_sigbus: tests/integration/madvise_sigbus.c tests/integration/meminfo.h \
		tests/integration/check.h | $(BUILD)
	$(CC) $(CFLAGS) -static -o $@ $<

# read() of a poisoned hugetlb page, as the salvage does it (kernel 8/10-10/10)
$(BUILD)/hugetlb_read: tests/integration/hugetlb_read.c tests/integration/check.h | $(BUILD)
	$(CC) $(CFLAGS) -static -o $@ $<

# userfaultfd's UFFDIO_POISON markers, anonymous and hugetlb (kernel 11/18-18/18)
$(BUILD)/uffd_poison: tests/integration/uffd_poison.c tests/integration/meminfo.h include/uffd_poison_uapi.h \
		tests/integration/check.h | $(BUILD)
	$(CC) $(CFLAGS) -static -o $@ $<

$(BUILD)/corrupt_va_probe: tests/integration/corrupt_va_probe.c tests/integration/meminfo.h | $(BUILD)
	$(CC) $(CFLAGS) -static -o $@ $<

# Holds a vCPU thread in a ptrace stop: a vCPU that never stops (vmm_basic).
$(BUILD)/thread_stop: tests/integration/thread_stop.c | $(BUILD)
	$(CC) $(CFLAGS) -static -o $@ $<

# One empty VM the outer VM's /init keeps for the whole boot (kvm_hold.c).
$(BUILD)/kvm_hold: outer-qemu/kvm_hold.c | $(BUILD)
	$(CC) $(CFLAGS) -static -o $@ $<

# Puts a page into each state memory_failure() handles and poisons it (in
# the outer VM only: the page_states scenario).
$(BUILD)/page_states: tests/integration/page_states.c | $(BUILD)
	$(CC) $(CFLAGS) -static -pthread -o $@ $<

# The Linux guest's workload and initramfs (guest-linux/): hwlab-vmm boots
# them with the project's own bzImage inside the outer VM.
$(BUILD)/inner/poison_target: guest-linux/poison_target.c | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

$(BUILD)/inner/mcelog_watch: guest-linux/mcelog_watch.c | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

# msr_poke: the guest's root misbehaving through /dev/cpu/N/msr (init's
# hwlab_inner.smca_hostile=, the linux_smca_hostile scenario)
$(BUILD)/inner/msr_poke: guest-linux/msr_poke.c | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

# kmsg_watch: how fast the guest isolates a lost huge page, from its kernel's
# log record times (init's hwlab_inner.kmsg_watch=)
$(BUILD)/inner/kmsg_watch: guest-linux/kmsg_watch.c | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

$(BUILD)/inner-initramfs.cpio.gz: $(BUILD)/inner/poison_target $(BUILD)/inner/mcelog_watch \
		$(BUILD)/inner/msr_poke $(BUILD)/inner/kmsg_watch guest-linux/init guest-linux/ras.sh \
		guest-linux/mkinitramfs.sh
	guest-linux/mkinitramfs.sh $@ $(BUILD)/inner/poison_target $(BUILD)/inner/mcelog_watch \
		$(BUILD)/inner/msr_poke $(BUILD)/inner/kmsg_watch

# The same for Debian's stock kernels as the guest, which have tracing (our
# tinyconfig bzImage has none): plus RAS_SUITE's rasdaemon and sqlite3 CLI
# with their libraries, for hwlab_inner.ras=1. A suite without them
# (debian-suite.sh exit 3) still gives the image, without rasdaemon: init
# then prints the reason, and the checks SKIP with it.
RAS_SUITE ?= sid
$(BUILD)/inner-initramfs-stock.cpio.gz: $(BUILD)/inner/poison_target $(BUILD)/inner/mcelog_watch \
		$(BUILD)/inner/msr_poke $(BUILD)/inner/kmsg_watch guest-linux/init guest-linux/ras.sh \
		guest-linux/mkinitramfs.sh scripts/debian-suite.sh
	RAS_SUITE=$(RAS_SUITE) guest-linux/mkinitramfs.sh $@ $(BUILD)/inner/poison_target \
		$(BUILD)/inner/mcelog_watch $(BUILD)/inner/msr_poke $(BUILD)/inner/kmsg_watch

$(BUILD)/guest.elf: guest/entry.S guest/guest.c guest/guest.ld include/hwlab_abi.h \
		include/x86_mce.h | $(BUILD)
	$(CC) $(GUEST_CFLAGS) $(GUEST_LDFLAGS) -o $@ guest/entry.S guest/guest.c

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

# The outer kernel of make test: ours on Debian's 6.1 (kernel/6.1/series),
# also published as host 6.1 (its features: kernel/features).
kernel:
	kernel/build.sh $(BUILD)
	scripts/host-kernel.sh 6.1 $(BUILD)/hosts/6.1

$(BUILD)/bzImage:
	kernel/build.sh $(BUILD)
	scripts/host-kernel.sh 6.1 $(BUILD)/hosts/6.1

# Another outer (host) kernel, HOST=: 6.1, 6.12, 7.2 (ours: Debian's
# linux-source-BASE with kernel/BASE/series) or bookworm, trixie, sid
# (Debian's stock kernel with its modules), in $(BUILD)/hosts/HOST; boot
# scenarios on it with HWLAB_HOST=HOST (outer-qemu/boot.sh, tests/run.sh)
# or make cell HOST=.
HOST ?= 6.1
host-kernel:
	scripts/host-kernel.sh $(HOST) $(BUILD)/hosts/$(HOST)

# The debug kernel: the same series and kernel/config plus kernel/config-debug
# (DEBUG_VM, PROVE_LOCKING, DEBUG_ATOMIC_SLEEP, KASAN), cached as its own flavour;
# published in $(BUILD)/debug.
debug-kernel:
	HWLAB_KERNEL_FLAVOUR=debug HWLAB_KERNEL_EXTRA_CONFIG=$(CURDIR)/kernel/config-debug \
		kernel/build.sh $(BUILD)/debug

# asan-build is a sub-make, always asked: it rebuilds nothing when nothing changed.
# The Linux guest is the project's own kernel: the outer initramfs carries
# bzImage and the guest's initramfs as /hwlab/data/.
$(BUILD)/initramfs.cpio.gz: $(OUTER_BINS) $(BUILD)/guest.elf $(SCENARIOS) outer-qemu/init \
		outer-qemu/mkinitramfs.sh tests/lib/check.sh kernel/features asan-build $(BUILD)/bzImage \
		$(BUILD)/inner-initramfs.cpio.gz $(BUILD)/inner-initramfs-stock.cpio.gz
	rm -rf $(BUILD)/outer-bin && mkdir -p $(BUILD)/outer-bin/data
	cp $(OUTER_BINS) $(BUILD)/outer-bin/
	cp $(BUILD)/guest.elf $(BUILD)/bzImage $(BUILD)/inner-initramfs.cpio.gz \
		$(BUILD)/inner-initramfs-stock.cpio.gz $(BUILD)/outer-bin/data/
	outer-qemu/mkinitramfs.sh $@ $(BUILD)/outer-bin tests/integration/scenarios $(ASAN_BUILD)/hwlab-vmm

# The side-by-side's image: the same, plus the distro's QEMU with its
# libraries and firmware, so that it runs as the inner VMM (compare), and
# libvirt's embedded QEMU driver with hwpoison-guest's libvirt build, so
# that QEMU is driven the way its users drive it.
# It also carries Debian's stock kernels (bookworm, trixie, sid: the newest
# of each, scripts/stock-kernels.sh, cached by version outside the clone;
# asked every time, since sid moves daily; $(BUILD)/stock/.changed is touched
# only when one changed, so the image is rebuilt only then).
QEMU_BIN ?= /usr/bin/qemu-system-x86_64
STOCK_SUITES ?= bookworm trixie sid
$(BUILD)/stock/.changed: FORCE
	scripts/stock-kernels.sh $(BUILD)/stock $(STOCK_SUITES)

# And the newer QEMUs, each with its own suite's libvirt (trixie's 10.0,
# sid's 11.1): sysroots from scripts/peers.sh (cached by version outside
# the clone, asked every time like the stock kernels), packed as chroots
# /hwlab/peers/SUITE/.
PEER_SUITES ?= trixie sid
$(BUILD)/peers/.changed: FORCE
	scripts/peers.sh $(BUILD)/peers $(PEER_SUITES)

$(BUILD)/initramfs-compare.cpio.gz: $(BUILD)/initramfs.cpio.gz $(BUILD)/hwpoison-guest \
		outer-qemu/libvirt-qemu.conf tests/lib/libvirt_embed.sh $(BUILD)/stock/.changed \
		$(BUILD)/peers/.changed
	QEMU_BUNDLE=$(QEMU_BIN) LIBVIRT_TOOL=$(BUILD)/hwpoison-guest STOCK_KERNELS=$(BUILD)/stock PEERS=$(BUILD)/peers \
		outer-qemu/mkinitramfs.sh $@ $(BUILD)/outer-bin tests/integration/scenarios $(ASAN_BUILD)/hwlab-vmm

# Upstream's own mm selftests (tests/upstream/mm.list) of each outer-kernel
# base, built statically from that base's Debian source tree
# (scripts/upstream-selftests.sh, cached by version outside the clone; asked
# every time, since sid moves; a base whose source cannot be fetched, exit
# 3, keeps what it had, and the scenario SKIPs on a base it lacks).
# $(BUILD)/selftests/.changed is touched only when a set changed, so that
# the image is rebuilt only then. The image: base's, plus the sets.
UPSTREAM_BASES ?= 6.1 6.12 7.2
$(BUILD)/selftests/.changed: FORCE
	@mkdir -p $(@D)
	@for b in $(UPSTREAM_BASES); do \
		scripts/upstream-selftests.sh $$b $(BUILD)/selftests/$$b; rc=$$?; \
		[ $$rc -eq 0 ] || [ $$rc -eq 3 ] || exit $$rc; \
	done; \
	[ -f $@ ] && [ -z "$$(find $(BUILD)/selftests -name key -newer $@)" ] || touch $@

# KVM's selftests (the two of our kvm series and upstream's on our ground,
# scripts/kvm-selftests.sh) of each patched base whose tree was built here
# (make host-kernel HOST=6.12|7.2 leaves $(BUILD)/hosts/BASE/kernel.tree);
# the same programs run on that base's stock kernel, where ours must fail.
KVM_SELFTEST_BASES ?= 6.12 7.2
$(BUILD)/kvm-selftests/.changed: FORCE
	@mkdir -p $(@D)
	@for b in $(KVM_SELFTEST_BASES); do \
		[ -f $(BUILD)/hosts/$$b/kernel.tree ] || { echo "kvm-selftests: $$b: no patched tree built (make host-kernel HOST=$$b)"; continue; }; \
		scripts/kvm-selftests.sh build $$b $(BUILD)/kvm-selftests/$$b || exit 1; \
	done; \
	[ -f $@ ] && [ -z "$$(find $(BUILD)/kvm-selftests -name key -newer $@)" ] || touch $@

$(BUILD)/initramfs-upstream.cpio.gz: $(BUILD)/initramfs.cpio.gz $(BUILD)/selftests/.changed \
		$(BUILD)/kvm-selftests/.changed tests/upstream/mm.known
	UPSTREAM_SELFTESTS=$(BUILD)/selftests UPSTREAM_KVM_SELFTESTS=$(BUILD)/kvm-selftests \
		outer-qemu/mkinitramfs.sh $@ $(BUILD)/outer-bin tests/integration/scenarios

FORCE:

initramfs: $(BUILD)/initramfs.cpio.gz $(BUILD)/initramfs-compare.cpio.gz

# UNIT='NAME...': only those tests (shell patterns; build/unit-tests --list names them)
unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests $(UNIT)

# ASan+UBSan: the same rules into build/asan, dynamically linked. Not
# recovering from UB makes every sanitizer report fail the run.
ASAN_BUILD := $(BUILD)/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

asan-build:
	$(MAKE) BUILD=$(ASAN_BUILD) SAN_FLAGS="$(ASAN_FLAGS)" VMM_STATIC= \
		$(ASAN_BUILD)/hwlab-vmm $(ASAN_BUILD)/unit-tests

asan: asan-build $(BUILD)/guest.elf $(BUILD)/json-field
	tests/host/asan.sh

# libFuzzer (clang): the same rules into build/fuzz, every object built with
# coverage; each target links only the code it fuzzes, FUZZ_SECONDS each.
FUZZ_BUILD := $(BUILD)/fuzz
# (the restore's target links all of vmm/: clang warns of a GNU extension gcc takes)
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -Wno-gnu-variable-sized-type-not-at-end
FUZZ_SECONDS := 60
FUZZERS := fuzz-elf-load fuzz-ucall fuzz-bzimage fuzz-stream-restore fuzz-watch-request

$(BUILD)/fuzz-elf-load: $(OBJ)/tests/fuzz/fuzz_elf_load.o $(OBJ)/vmm/boot/elf_load.o $(OBJ)/vmm/core/memslot.o
	$(CC) $(SAN_FLAGS) -fsanitize=fuzzer -o $@ $^

$(BUILD)/fuzz-ucall: $(OBJ)/tests/fuzz/fuzz_ucall.o $(OBJ)/vmm/hwlab/ucall_decode.o \
		$(OBJ)/vmm/core/memslot.o $(OBJ)/vmm/core/report.o $(OBJ)/vmm/core/outq.o \
		$(OBJ)/lib/clock.o $(OBJ)/lib/log.o $(OBJ)/lib/escape.o
	$(CC) $(SAN_FLAGS) -fsanitize=fuzzer -pthread -o $@ $^

$(BUILD)/fuzz-bzimage: $(OBJ)/tests/fuzz/fuzz_bzimage.o $(OBJ)/vmm/boot/bzimage.o
	$(CC) $(SAN_FLAGS) -fsanitize=fuzzer -o $@ $^

# The whole restore over the VMM's own objects; KVM's ioctls answered by
# fake_kvm.c (--wrap), the stream's CRCs kept right by stream_mutator.c.
$(BUILD)/fuzz-stream-restore: $(OBJ)/tests/fuzz/fuzz_stream_restore.o \
		$(OBJ)/tests/fuzz/stream_mutator.o $(OBJ)/tests/fuzz/fake_kvm.o \
		$(BUILD)/libvmm.a $(BUILD)/libhwlab.a
	$(CC) $(SAN_FLAGS) -fsanitize=fuzzer -pthread -Wl,--wrap=ioctl -o $@ $^

# The same without the custom mutator: libFuzzer's own mutations only, the
# baseline the mutator's gain is measured against (docs/design.md).
$(BUILD)/fuzz-stream-restore-plain: $(OBJ)/tests/fuzz/fuzz_stream_restore.o \
		$(OBJ)/tests/fuzz/stream_mutator_plain.o $(OBJ)/tests/fuzz/fake_kvm.o \
		$(BUILD)/libvmm.a $(BUILD)/libhwlab.a
	$(CC) $(SAN_FLAGS) -fsanitize=fuzzer -pthread -Wl,--wrap=ioctl -o $@ $^

$(OBJ)/tests/fuzz/stream_mutator_plain.o: tests/fuzz/stream_mutator.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -DHWLAB_FUZZ_NO_MUTATOR -c -o $@ $<

$(BUILD)/fuzz-watch-request: $(OBJ)/tests/fuzz/fuzz_watch_request.o \
		$(OBJ)/tools/memory_failure_event.o $(BUILD)/libhwlab.a
	$(CC) $(SAN_FLAGS) -fsanitize=fuzzer -o $@ $^

$(OBJ)/tests/fuzz/%.o: HOST_CFLAGS += -Itools

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang SAN_FLAGS="$(FUZZ_FLAGS)" $(FUZZERS:%=$(FUZZ_BUILD)/%) \
		$(FUZZ_BUILD)/fuzz-stream-restore-plain

fuzz: fuzz-build $(BUILD)/guest.elf
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The kernel step is a cached no-op when series and config are unchanged.
test: all asan-build kernel initramfs
	tests/run.sh

# The same suite with every core kept busy by another process, as on a loaded
# CI machine: tests must wait for states, not for time.
test-loaded: all kernel initramfs
	HWLAB_CPU_HOG=$$(nproc) tests/run.sh

# The kernel-facing scenarios booted on the debug kernel (not part of make
# test): the outer VM's bounds DEBUG_TIME_FACTOR times longer, logs in
# $(BUILD)/logs/debug, and after each scenario one check per lockdep,
# might_sleep, VM_BUG_ON, BUG:, WARNING: or KASAN report on the outer
# kernel's console (tests/host/kernel_splats.sh). The Linux guest's kernel
# in the image stays $(BUILD)/bzImage; these scenarios do not boot it.
# seed_paths holds the page states page_states leaves out (KSM, unevictable,
# soft offline, filters, ...): the same kernel paths, so it runs here too;
# hugepages_1g takes patch 0001's path with 1 GiB pages.
DEBUG_SCENARIOS := page_states seed_paths corrupt_va stats unpoison hugepages hugepages_1g \
	external_poison
DEBUG_TIME_FACTOR ?= 4
test-debug-kernel: all kernel initramfs debug-kernel
	HWLAB_KERNEL=$(abspath $(BUILD))/debug/bzImage HWLAB_TIME_FACTOR=$(DEBUG_TIME_FACTOR) \
		HWLAB_LOGS=$(abspath $(BUILD))/logs/debug HWLAB_HOST_CHECKS=0 HWLAB_SPLAT_CHECK=1 \
		tests/run.sh $(DEBUG_SCENARIOS)

demo: all kernel initramfs
	tests/demo.sh

# The measure group of tests/integration/scenarios.table: a scenario with a
# longer run of its own (make test runs each with small numbers), one
# outer-VM boot of the scenario named like the target (- for _). Each target
# sets its outer kernel arguments, log, bound, the lines it shows besides the
# checks (MEASURE_SHOWN: more grep alternatives) and the
# script that makes its table; the one recipe below shows them and fails as
# a scenario does: on a failed check, a failed table script or the
# scenario's exit status.
MEASURE_TARGETS := soak linux-latency compare guest-matrix

# The soak scenario with N events (make test runs it with 100): the checks
# and the latency summary (median/p99/max and the slowest event's breakdown).
N ?= 1000
soak: MEASURE_APPEND = hwlab.soak_events=$(N)
soak: MEASURE_LOG = soak-$(N).log
soak: MEASURE_BOUND = $$((600 + $(N)))
soak: MEASURE_SHOWN = \|^HWLAB-MEASURE soak

# The Linux guest's boot time and LINUX_EVENTS late-kill events (median, p99).
LINUX_EVENTS ?= 20
linux-latency: MEASURE_APPEND = hwlab.linux_events=$(LINUX_EVENTS)
linux-latency: MEASURE_LOG = linux-latency-$(LINUX_EVENTS).log
linux-latency: MEASURE_BOUND = 600
linux-latency: MEASURE_SHOWN = \|^HWLAB-MEASURE

# The side-by-side with QEMU: the compare scenario's table (tests/compare.py),
# per guest (our bzImage, sid's stock kernel) and VMM (hwlab-vmm, QEMU 11.1,
# 10.0, 7.2) COMPARE_EVENTS late and early events (make test's run takes 1,
# each QEMU event is a QEMU boot) and COMPARE_HUGE_EVENTS 2 MiB hugetlb ones,
# and the hugetlb and outside-RAM cases on the stock guest too (make test:
# bzImage only). COMPARE_DYING_EVENTS events per row of the dying target
# on a lost 2 MiB (issue #24: hwlab-vmm hugetlb-shared must lose no guest
# in 20; private hugetlb and QEMU 11.1 beside it), and the default
# check_interval case (up to 30 s per event). HWLAB_APPEND can narrow the
# run: hwlab.compare_cases=dying,default (compare.sh's header).
COMPARE_EVENTS ?= 5
COMPARE_HUGE_EVENTS ?= 2
COMPARE_DYING_EVENTS ?= 20
compare: MEASURE_APPEND = hwlab.compare_events=$(COMPARE_EVENTS) hwlab.compare_huge_events=$(COMPARE_HUGE_EVENTS) hwlab.compare_dying_events=$(COMPARE_DYING_EVENTS) hwlab.compare_stock_all=1 $(HWLAB_APPEND)
compare: MEASURE_LOG = compare.log
compare: MEASURE_BOUND = $$((1800 + 400 * $(COMPARE_EVENTS) + 300 * $(COMPARE_HUGE_EVENTS) + 400 * $(COMPARE_DYING_EVENTS)))
compare: MEASURE_TABLE = python3 tests/compare.py

# Debian's stock kernels as guests (bookworm, trixie, sid) and ours, in
# hwlab-vmm, every case and the guests' default MCE poll, with each
# kernel's boot time beside sid's QEMU: tests/guest_matrix.py's table.
# make test runs the quick form (sid's kernel, late and early kill).
guest-matrix: MEASURE_APPEND = hwlab.matrix=full $(HWLAB_APPEND)
guest-matrix: MEASURE_LOG = guest-matrix.log
guest-matrix: MEASURE_BOUND = 3600
guest-matrix: MEASURE_TABLE = python3 tests/guest_matrix.py

$(MEASURE_TARGETS): all kernel initramfs
	@mkdir -p $(BUILD)/logs
	HWLAB_APPEND="$(MEASURE_APPEND)" outer-qemu/boot.sh $(subst -,_,$@) $(BUILD)/logs/$(MEASURE_LOG) \
		$(MEASURE_BOUND); rc=$$?; \
	grep -a '^HWLAB-CHECK $(MEASURE_SHOWN)' $(BUILD)/logs/$(MEASURE_LOG); \
	$(if $(MEASURE_TABLE),$(MEASURE_TABLE) $(BUILD)/logs/$(MEASURE_LOG) && )! grep -aq '^HWLAB-CHECK FAIL' $(BUILD)/logs/$(MEASURE_LOG) && exit $$rc

# The host matrix (issue #40): each case of tests/matrix/host-matrix.table
# on each outer kernel, HOSTS (ours 6.1, 6.12, 7.2 and Debian's stock
# bookworm, trixie, sid), one outer VM per cell. A cell runs alone
# (make cell HOST=sid CASE=late_kill) into its result file,
# build/cells/HOST/CASE.json; the tables are made only by merging those
# (tests/matrix/merge.py), so make -jN, or CI jobs each running some cells,
# give the same tables (docs/host-matrix.md shows a CI matrix). Not part of
# make test: hours on 2 cores.
HOSTS ?= bookworm 6.1 trixie 6.12 sid 7.2
CASES ?= $(shell awk '!/^\#/ && NF { print $$1 }' tests/matrix/host-matrix.table)
CELLS_DIR ?= $(BUILD)/cells
CELL_FILES := $(foreach h,$(HOSTS),$(foreach c,$(CASES),$(CELLS_DIR)/$(h)/$(c).json))
CASE ?= smoke

# (a case of the upstream image needs it built; the host kernel first: the
# KVM selftests come from the patched tree it leaves)
UPSTREAM_IMAGE = $(if $(filter upstream_%,$(1)),$(BUILD)/initramfs-upstream.cpio.gz)
cell: all initramfs
	scripts/host-kernel.sh $(HOST) $(BUILD)/hosts/$(HOST)
	$(if $(call UPSTREAM_IMAGE,$(CASE)),$(MAKE) $(call UPSTREAM_IMAGE,$(CASE)))
	tests/matrix/cell.py $(HOST) $(CASE) --out $(CELLS_DIR)

# (the host kernels first, one at a time: two cells of one host must not
# both build it)
host-matrix: all initramfs
	for h in $(HOSTS); do scripts/host-kernel.sh $$h $(BUILD)/hosts/$$h || exit 1; done
	$(if $(call UPSTREAM_IMAGE,$(CASES)),$(MAKE) $(call UPSTREAM_IMAGE,$(CASES)))
	$(MAKE) -k host-matrix-cells; rc=$$?; \
	tests/matrix/merge.py --times $(CELLS_DIR) >$(BUILD)/host-matrix.md && cat $(BUILD)/host-matrix.md; \
	exit $$rc

host-matrix-cells: $(CELL_FILES)

# make -j2 of two cells against one after the other: the same tables
matrix-shard-check: all initramfs
	for h in bookworm sid; do scripts/host-kernel.sh $$h $(BUILD)/hosts/$$h || exit 1; done
	tests/matrix/shard_check.sh

$(CELLS_DIR)/%.json: FORCE
	tests/matrix/cell.py $(subst /, ,$*) --out $(CELLS_DIR)

# The upstream_mm and upstream_kvm scenarios (group upstream, not in make
# test) on the current outer kernel (HWLAB_KERNEL, default build/bzImage;
# HWLAB_HOST=... for another host): every test of its base a check, the
# summaries their HWLAB-UPSTREAM lines. (upstream_kvm has tests for the
# 6.12 and 7.2 bases only; make cell HOST=... CASE=upstream_kvm.)
upstream-selftests: all kernel $(BUILD)/initramfs-upstream.cpio.gz
	HWLAB_HOST_CHECKS=0 tests/run.sh upstream_mm upstream_kvm; rc=$$?; \
	grep -a '^HWLAB-UPSTREAM' $(BUILD)/logs/upstream_mm.log $(BUILD)/logs/upstream_kvm.log; exit $$rc

deps:
	scripts/install-deps.sh

clean:
	rm -rf $(BUILD)

.PHONY: FORCE host-kernel cell host-matrix host-matrix-cells matrix-shard-check upstream-selftests compare guest-matrix linux-latency all kernel debug-kernel test-debug-kernel initramfs unit asan-build asan fuzz-build fuzz test test-loaded soak demo deps clean
