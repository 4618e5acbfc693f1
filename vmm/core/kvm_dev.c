// SPDX-License-Identifier: GPL-2.0
#include "core/kvm_dev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "x86/cpuid.h"
#include "core/kvm_ioctl.h"
#include "log.h"
#include "core/report.h"

/*
 * The probe's real-mode code at XSETBV_PROBE_CODE: mov eax,cr4; or eax,
 * OSXSAVE; mov cr4,eax; xor ecx,ecx; xor edx,edx; mov eax,3; xsetbv; hlt.
 * Every interrupt vector points at a hlt of its own (XSETBV_PROBE_TRAP):
 * a fault halts there instead of running the page from 0.
 */
#define XSETBV_PROBE_CODE	0x1000
#define XSETBV_PROBE_TRAP	0x800
static const uint8_t xsetbv_probe_code[] = {
	0x0f, 0x20, 0xe0, 0x66, 0x0d, 0x00, 0x00, 0x04, 0x00, 0x0f, 0x22, 0xe0,
	0x66, 0x31, 0xc9, 0x66, 0x31, 0xd2, 0x66, 0xb8, 0x03, 0x00, 0x00, 0x00,
	0x0f, 0x01, 0xd1, 0xf4,
};

static int xsetbv_probe_run(int vm, int vcpu, uint8_t *mem, long run_size)
{
	struct kvm_userspace_memory_region region = {
		.memory_size = 0x2000, .userspace_addr = (uintptr_t)mem,
	};
	struct kvm_regs regs = { .rip = XSETBV_PROBE_CODE, .rflags = 2 };
	struct kvm_xcrs xcrs;
	struct kvm_sregs sregs;
	struct kvm_run *run;
	unsigned int i;
	int ok = -1, r;

	for (i = 0; i < 256; i++) {
		uint32_t vec = XSETBV_PROBE_TRAP;	/* segment 0 */

		memcpy(mem + 4 * i, &vec, 4);
	}
	mem[XSETBV_PROBE_TRAP] = 0xf4;
	memcpy(mem + XSETBV_PROBE_CODE, xsetbv_probe_code, sizeof(xsetbv_probe_code));
	run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED) {
		pr_errno("mmap of the XSETBV probe's kvm_run");
		return -1;
	}
	if (kvm_ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0 ||
	    kvm_ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		goto out;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (kvm_ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0 || kvm_ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		goto out;
	/* a signal meant for the VMM interrupts it; the vCPU then runs on */
	while ((r = ioctl(vcpu, KVM_RUN, 0)) < 0 && errno == EINTR)
		;
	if (r < 0) {
		pr_errno("KVM_RUN (XSETBV probe)");
		goto out;
	}
	if (kvm_ioctl(vcpu, KVM_GET_REGS, &regs) < 0 || kvm_ioctl(vcpu, KVM_GET_XCRS, &xcrs) < 0)
		goto out;
	if (run->exit_reason != KVM_EXIT_HLT ||
	    regs.rip != XSETBV_PROBE_CODE + sizeof(xsetbv_probe_code)) {
		pr_err("XSETBV probe: exit %u at rip %#llx, not the halt after its XSETBV",
		       run->exit_reason, (unsigned long long)regs.rip);
		goto out;
	}
	ok = xcrs.nr_xcrs >= 1 && xcrs.xcrs[0].xcr == 0 && xcrs.xcrs[0].value == 3;
out:
	munmap(run, run_size);
	return ok;
}

int kvm_dev_xsetbv_exits(int kvm_fd, const struct kvm_cpuid2 *cpuid)
{
	const struct kvm_cpuid_entry2 *leaf1 = cpuid_find((struct kvm_cpuid2 *)cpuid, 1, 0);
	long run_size = kvm_ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	int vm = -1, vcpu = -1, ok = -1;
	uint8_t *mem;

	if (!leaf1 || !(leaf1->ecx & CPUID_1_ECX_XSAVE))
		return 1;
	if (run_size < 0)
		return -1;
	mem = mmap(NULL, 0x2000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		pr_errno("mmap of the XSETBV probe's memory");
		return -1;
	}
	vm = kvm_ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm >= 0)
		vcpu = kvm_ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu >= 0 && kvm_ioctl(vcpu, KVM_SET_CPUID2, cpuid) >= 0)
		ok = xsetbv_probe_run(vm, vcpu, mem, run_size);
	if (vcpu >= 0)
		close(vcpu);
	if (vm >= 0)
		close(vm);
	munmap(mem, 0x2000);
	return ok;
}

/* 1 if /proc/cpuinfo lists svm or vmx, 0 if not, -1 if it cannot be read. */
static int cpu_has_virt_flag(void)
{
	char line[4096];
	int found = -1;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		found = strstr(line, " svm") || strstr(line, " vmx");
		break;
	}
	fclose(f);
	return found;
}

int kvm_dev_open(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int version;

	if (fd < 0) {
		if (errno == ENOENT && cpu_has_virt_flag() == 0)
			pr_err("/dev/kvm does not exist and the CPU has neither svm nor vmx: "
			       "no hardware virtualization here");
		else if (errno == ENOENT)
			pr_err("/dev/kvm does not exist: load kvm_amd or kvm_intel");
		else
			pr_errno("cannot open /dev/kvm");
		return -1;
	}
	version = kvm_ioctl(fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION) {
		if (version >= 0)
			pr_err("KVM_GET_API_VERSION: version %d, expected %d", version,
			       KVM_API_VERSION);
		close(fd);
		return -1;
	}
	return fd;
}

struct kvm_cpuid2 *kvm_dev_supported_cpuid(int kvm_fd)
{
	unsigned int n;

	/* KVM answers E2BIG until the array is large enough: grow, quietly. */
	for (n = 128; n <= 4096; n *= 2) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));

		if (!c) {
			pr_err("out of memory for %u CPUID entries", n);
			return NULL;
		}
		c->nent = n;
		if (!ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c))
			return c;
		free(c);
		if (errno != E2BIG)
			break;
	}
	pr_errno("KVM_GET_SUPPORTED_CPUID");
	return NULL;
}

int kvm_dev_check(void)
{
	uint64_t mce_cap = 0;
	struct kvm_cpuid2 *cpuid;
	struct kvm_cpuid_entry2 *ras;
	int kvm = kvm_dev_open(), vm, banks;

	if (kvm < 0)
		return 1;
	vm = kvm_ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return 1;
	banks = kvm_ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MCE);
	if (banks < 0 || kvm_ioctl(kvm, KVM_X86_GET_MCE_CAP_SUPPORTED, &mce_cap) < 0)
		return 1;
	cpuid = kvm_dev_supported_cpuid(kvm);
	if (!cpuid)
		return 1;
	/* KVM's own answer, before the VMM adds SUCCOR for an AMD guest (cpuid.c) */
	ras = cpuid_find(cpuid, 0x80000007, 0);
	report("check", "\"api_version\":%d,\"create_vm\":true,\"cap_mce_banks\":%d,"
	       "\"mce_cap_supported\":\"%#llx\",\"vendor\":\"%s\","
	       "\"supported_cpuid_8000_0007_ebx\":\"%#x\"", KVM_API_VERSION, banks,
	       (unsigned long long)mce_cap, cpuid_vendor_name(cpuid_vendor(cpuid)),
	       ras ? ras->ebx : 0);
	free(cpuid);
	close(vm);
	close(kvm);
	return 0;
}
