// SPDX-License-Identifier: GPL-2.0
/*
 * A reset puts a vCPU in its power-on state: on the host's /dev/kvm, a vCPU
 * is put into what a guest leaves behind (NMIs blocked and one pending, an
 * interrupt injected under a shadow, breakpoints, XCR0, x87 control word,
 * SYSCALL and kvmclock MSRs), then vcpu_power_on_state() must clear it all.
 * Without a usable /dev/kvm it is skipped (UNIT_SKIP), saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "core/kvm_dev.h"
#include "unit.h"
#include "vcpu.h"
#include "core/vm.h"

#define MSR_IA32_SYSENTER_CS	0x174
#define MSR_IA32_CR_PAT		0x277
#define MSR_LSTAR		0xc0000082

static struct vm vm;

static int get_msr(struct vcpu *v, uint32_t index, uint64_t *value)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = index };

	if (ioctl(v->fd, KVM_GET_MSRS, &m) != 1)
		return -1;
	*value = m.e.data;
	return 0;
}

static int set_msr(struct vcpu *v, uint32_t index, uint64_t value)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e = { .index = index, .data = value } };

	return ioctl(v->fd, KVM_SET_MSRS, &m) == 1 ? 0 : -1;
}

/* What a guest leaves behind when it is reset in its NMI handler, and more. */
static int dirty(struct vcpu *v)
{
	struct kvm_vcpu_events ev = {
		.nmi = { .pending = 1, .masked = 1 },
		.interrupt = { .injected = 1, .nr = 0x30, .shadow = 1 },
		.flags = KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SHADOW,
	};
	struct kvm_debugregs dbg = { .db = { 0x1234 }, .dr6 = 0xffff0ff1, .dr7 = 0x401 };
	struct kvm_fpu fpu = { .fcw = 0x27f, .mxcsr = 0x1f00 };
	struct kvm_xcrs xcrs = { .nr_xcrs = 1, .xcrs[0] = { .xcr = 0, .value = 3 } };

	if (ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev))
		return printf("KVM_SET_VCPU_EVENTS "), -1;
	if (ioctl(v->fd, KVM_SET_DEBUGREGS, &dbg))
		return printf("KVM_SET_DEBUGREGS "), -1;
	if (ioctl(v->fd, KVM_SET_FPU, &fpu))
		return printf("KVM_SET_FPU "), -1;
	/* x87|SSE in XCR0 where the host has XSAVE */
	if (ioctl(vm.kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) > 0 &&
	    ioctl(v->fd, KVM_SET_XCRS, &xcrs))
		return printf("KVM_SET_XCRS "), -1;
	return set_msr(v, MSR_LSTAR, 0xffffffff81000000ULL) ||
	       set_msr(v, MSR_IA32_SYSENTER_CS, 0x10) || set_msr(v, MSR_IA32_CR_PAT, 0);
}

UNIT_TEST(vcpu_reset, "vCPU reset to its power-on state (host /dev/kvm)")
{
	struct vcpu *v = &vm.vcpus[0];
	struct kvm_vcpu_events ev;
	struct kvm_debugregs dbg;
	struct kvm_fpu fpu;
	struct kvm_xcrs xcrs;
	uint64_t lstar = 1, sysenter_cs = 1, pat = 0;

	vm.kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	UNIT_REQUIRE(vm.kvm_fd >= 0, "cannot open /dev/kvm: %s", strerror(errno));
	vm.vm_fd = ioctl(vm.kvm_fd, KVM_CREATE_VM, 0);
	v->vm = &vm;
	v->fd = vm.vm_fd < 0 ? -1 : ioctl(vm.vm_fd, KVM_CREATE_VCPU, 0);
	if (v->fd < 0) {
		int err = errno;

		if (vm.vm_fd >= 0)
			close(vm.vm_fd);
		close(vm.kvm_fd);
		UNIT_SKIP("KVM_CREATE_VM/KVM_CREATE_VCPU: %s", strerror(err));
	}
	/* the host's CPUID, as the VMM gives it: XCR0 may then hold SSE too */
	{
		struct kvm_cpuid2 *c = kvm_dev_supported_cpuid(vm.kvm_fd);

		CHECK(c && !ioctl(v->fd, KVM_SET_CPUID2, c), "KVM_SET_CPUID2");
		free(c);
	}
	CHECK(!dirty(v), "setting up the dirty vCPU: %s", strerror(errno));
	CHECK(!ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev) && ev.nmi.masked && ev.nmi.pending,
	      "the vCPU is NMI-blocked with an NMI pending before the reset");

	CHECK_EQ(vcpu_power_on_state(v), 0);

	CHECK(!ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev), "KVM_GET_VCPU_EVENTS");
	CHECK_EQ(ev.nmi.masked, 0);
	CHECK_EQ(ev.nmi.pending, 0);
	CHECK_EQ(ev.nmi.injected, 0);
	CHECK_EQ(ev.interrupt.injected, 0);
	CHECK_EQ(ev.interrupt.shadow, 0);
	CHECK_EQ(ev.exception.injected, 0);
	CHECK_EQ(ev.exception.pending, 0);
	CHECK_EQ(ev.smi.smm, 0);
	CHECK_EQ(ev.smi.pending, 0);
	CHECK(!ioctl(v->fd, KVM_GET_DEBUGREGS, &dbg), "KVM_GET_DEBUGREGS");
	CHECK_EQ(dbg.db[0], 0);
	CHECK_EQ(dbg.dr6, 0xffff0ff0);
	CHECK_EQ(dbg.dr7, 0x400);
	/*
	 * From the XSAVE area where there is one: this host's KVM_GET_FPU
	 * reads MXCSR as 0 even right after KVM_SET_FPU wrote 0x1f80.
	 */
	if (ioctl(vm.kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE) > 0) {
		static struct kvm_xsave xs;
		uint16_t fcw = 0;
		uint32_t mxcsr = 0;

		CHECK(!ioctl(v->fd, KVM_GET_XSAVE, &xs), "KVM_GET_XSAVE");
		memcpy(&fcw, (uint8_t *)xs.region, sizeof(fcw));
		memcpy(&mxcsr, (uint8_t *)xs.region + 24, sizeof(mxcsr));
		CHECK_EQ(fcw, 0x37f);
		CHECK_EQ(mxcsr, 0x1f80);
	} else {
		CHECK(!ioctl(v->fd, KVM_GET_FPU, &fpu), "KVM_GET_FPU");
		CHECK_EQ(fpu.fcw, 0x37f);
		CHECK_EQ(fpu.mxcsr, 0x1f80);
	}
	if (ioctl(vm.kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) > 0) {
		CHECK(!ioctl(v->fd, KVM_GET_XCRS, &xcrs), "KVM_GET_XCRS");
		CHECK_EQ(xcrs.xcrs[0].value, 1);
	}
	CHECK(!get_msr(v, MSR_LSTAR, &lstar) && !get_msr(v, MSR_IA32_SYSENTER_CS, &sysenter_cs) &&
	      !get_msr(v, MSR_IA32_CR_PAT, &pat), "KVM_GET_MSRS");
	CHECK_EQ(lstar, 0);
	CHECK_EQ(sysenter_cs, 0);
	CHECK_EQ(pat, 0x0007040600070406ULL);
	close(v->fd);
	close(vm.vm_fd);
	close(vm.kvm_fd);
}
