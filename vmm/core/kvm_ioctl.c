// SPDX-License-Identifier: GPL-2.0
#include "core/kvm_ioctl.h"

#include <errno.h>
#include <sys/ioctl.h>

#include "log.h"

int __kvm_ioctl(int fd, unsigned long req, void *arg, const char *name, int vcpu)
{
	int r = ioctl(fd, req, arg);

	if (r < 0) {
		if (vcpu == KVM_IOCTL_NO_VCPU)
			pr_errno("%s", name);
		else
			pr_errno("%s (vCPU %d)", name, vcpu);
	}
	return r;
}

static int msrs_ioctl(int vcpu_fd, unsigned int vcpu_id, unsigned long req, const char *name,
		      struct kvm_msrs *msrs)
{
	int r = ioctl(vcpu_fd, req, msrs);

	if (r < 0) {
		pr_errno("%s (vCPU %u)", name, vcpu_id);
		return -1;
	}
	if ((unsigned int)r != msrs->nmsrs) {
		pr_err("%s (vCPU %u): KVM refused MSR %#x (%d of %u done)", name, vcpu_id,
		       msrs->entries[r].index, r, msrs->nmsrs);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int vcpu_get_msrs(int vcpu_fd, unsigned int vcpu_id, struct kvm_msrs *msrs)
{
	return msrs_ioctl(vcpu_fd, vcpu_id, KVM_GET_MSRS, "KVM_GET_MSRS", msrs);
}

int vcpu_set_msrs(int vcpu_fd, unsigned int vcpu_id, struct kvm_msrs *msrs)
{
	return msrs_ioctl(vcpu_fd, vcpu_id, KVM_SET_MSRS, "KVM_SET_MSRS", msrs);
}

/* One MSR: a kvm_msrs header and its single entry. */
struct one_msr {
	struct kvm_msrs hdr;
	struct kvm_msr_entry entry;
};

int vcpu_get_msr(int vcpu_fd, unsigned int vcpu_id, uint32_t index, uint64_t *data)
{
	struct one_msr m = { .hdr.nmsrs = 1, .entry.index = index };

	if (vcpu_get_msrs(vcpu_fd, vcpu_id, &m.hdr))
		return -1;
	*data = m.entry.data;
	return 0;
}

int vcpu_set_msr(int vcpu_fd, unsigned int vcpu_id, uint32_t index, uint64_t data)
{
	struct one_msr m = { .hdr.nmsrs = 1, .entry.index = index, .entry.data = data };

	return vcpu_set_msrs(vcpu_fd, vcpu_id, &m.hdr);
}
