# hwpoison-lab: HWPOISON recovery for KVM guests, end to end.
#   make deps   install the build's Debian packages (apt-get)
#   make        VMM, guest, test programs (host side, no VM)
#   make test   host unit tests + outer-VM integration scenarios
#   make demo   boot the outer VM and tell the recovery story
CC      ?= gcc
BUILD   := build
CFLAGS  := -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude -Ivmm
# The guest is freestanding: no libc, no SSE, no red zone (exceptions push on
# the interrupted stack), linked at its load address.
GUEST_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -Iinclude -ffreestanding \
	-fno-pic -fno-pie -fno-stack-protector -mno-red-zone -mgeneral-regs-only \
	-fno-asynchronous-unwind-tables -fcf-protection=none
GUEST_LDFLAGS := -nostdlib -static -no-pie -Wl,-T,guest/guest.ld -Wl,--build-id=none -Wl,--no-warn-rwx-segments

VMM_PURE := vmm/memslot.c vmm/mce_encode.c vmm/poison_list.c vmm/elf_load.c vmm/mce_event.c \
	vmm/report.c
VMM_SRCS := $(VMM_PURE) vmm/mce.c vmm/sigbus.c vmm/vm.c vmm/vcpu.c vmm/poison_hook.c vmm/main.c
VMM_HDRS := $(wildcard vmm/*.h) include/hwlab_abi.h
UNIT_SRCS := $(wildcard tests/unit/*.c)
OUTER_BINS := $(BUILD)/hwlab-vmm $(BUILD)/madvise_sigbus $(BUILD)/hwpoison-guest
SCENARIOS := $(wildcard tests/integration/scenarios/*.sh)

all: $(BUILD)/hwlab-vmm $(BUILD)/guest.elf $(BUILD)/unit-tests $(BUILD)/madvise_sigbus \
	$(BUILD)/hwpoison-guest

$(BUILD):
	mkdir -p $@

# Static: the outer VM's initramfs has no libc.
$(BUILD)/hwlab-vmm: $(VMM_SRCS) $(VMM_HDRS) | $(BUILD)
	$(CC) $(CFLAGS) -static -pthread -o $@ $(VMM_SRCS)

$(BUILD)/guest.elf: guest/entry.S guest/guest.c guest/guest.ld include/hwlab_abi.h | $(BUILD)
	$(CC) $(GUEST_CFLAGS) $(GUEST_LDFLAGS) -o $@ guest/entry.S guest/guest.c

$(BUILD)/unit-tests: $(UNIT_SRCS) $(VMM_PURE) $(VMM_HDRS) tests/unit/unit.h | $(BUILD)
	$(CC) $(CFLAGS) -Itests/unit -pthread -o $@ $(UNIT_SRCS) $(VMM_PURE) vmm/sigbus.c

$(BUILD)/hwpoison-guest: tools/hwpoison-guest.c include/hwlab_abi.h | $(BUILD)
	$(CC) $(CFLAGS) -static -o $@ $<

$(BUILD)/madvise_sigbus: tests/integration/madvise_sigbus.c | $(BUILD)
	$(CC) $(CFLAGS) -static -o $@ $<

kernel:
	scripts/build-kernel.sh $(BUILD)

$(BUILD)/bzImage:
	scripts/build-kernel.sh $(BUILD)

$(BUILD)/initramfs.cpio.gz: $(OUTER_BINS) $(BUILD)/guest.elf $(SCENARIOS) outer-qemu/init \
		outer-qemu/mkinitramfs.sh tests/lib/check.sh
	rm -rf $(BUILD)/outer-bin && mkdir -p $(BUILD)/outer-bin/data
	cp $(OUTER_BINS) $(BUILD)/outer-bin/
	cp $(BUILD)/guest.elf $(BUILD)/outer-bin/data/
	outer-qemu/mkinitramfs.sh $@ $(BUILD)/outer-bin tests/integration/scenarios

initramfs: $(BUILD)/initramfs.cpio.gz

unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests

# The kernel step is a cached no-op when series and config are unchanged.
test: all kernel initramfs
	tests/run.sh

demo: all kernel initramfs
	tests/demo.sh

deps:
	scripts/install-deps.sh

clean:
	rm -rf $(BUILD)

.PHONY: all kernel initramfs unit test demo deps clean
