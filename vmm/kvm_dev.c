// SPDX-License-Identifier: GPL-2.0
#include "kvm_dev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cpuid.h"
#include "kvm_ioctl.h"
#include "log.h"
#include "report.h"

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
