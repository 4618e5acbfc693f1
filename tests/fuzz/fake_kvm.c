// SPDX-License-Identifier: GPL-2.0
#include "fake_kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "x86_mce.h"

#define MAX_FAKE_FDS	16
#define MCE_BANKS_LISTED 32	/* the MCE banks' MSRs KVM takes: more than any VM here has */

static struct {
	int fd;
	unsigned int vm;
} fakes[MAX_FAKE_FDS];
static unsigned int nr_fakes;
static int has_irqchip[2];

/* what KVM_GET_MSR_INDEX_LIST lists: a few of a real KVM's, the TSC deadline among them */
static const uint32_t msr_list[] = {
	0x10, 0x174, 0x175, 0x176, 0x1a0, 0x6e0, 0xc0000080, 0xc0000081, 0xc0000082, 0xc0000102,
};

int fake_kvm_fd(unsigned int vm)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0 || nr_fakes == MAX_FAKE_FDS || vm > 1)
		abort();
	fakes[nr_fakes].fd = fd;
	fakes[nr_fakes++].vm = vm;
	return fd;
}

static int fake_of(int fd)
{
	unsigned int i;

	for (i = 0; i < nr_fakes; i++)
		if (fakes[i].fd == fd)
			return (int)i;
	return -1;
}

/* KVM takes an MSR it lists, MCG_STATUS and the banks' (the VMM adds those itself) */
static int msr_known(uint32_t index)
{
	unsigned int i;

	for (i = 0; i < sizeof(msr_list) / sizeof(msr_list[0]); i++)
		if (msr_list[i] == index)
			return 1;
	return index == MSR_IA32_MCG_STATUS ||
	       (index >= MSR_IA32_MCx_CTL(0) && index < MSR_IA32_MCx_CTL(MCE_BANKS_LISTED));
}

/* KVM_GET_MSRS and KVM_SET_MSRS: how many it did before the first it refuses */
static int msrs(struct kvm_msrs *m, int set)
{
	unsigned int i;

	for (i = 0; i < m->nmsrs; i++) {
		if (!msr_known(m->entries[i].index))
			break;
		if (!set)
			m->entries[i].data = 0;
	}
	return (int)i;
}

static int fail(int e)
{
	errno = e;
	return -1;
}

static int fake_ioctl(unsigned int vm, unsigned long req, void *arg)
{
	switch (req) {
	case KVM_CHECK_EXTENSION:
		switch ((long)arg) {
		case KVM_CAP_XSAVE:
		case KVM_CAP_XCRS:
		case KVM_CAP_SET_TSS_ADDR:
			return 1;
		}
		return 0;
	case KVM_GET_MSR_INDEX_LIST: {
		struct kvm_msr_list *l = arg;
		uint32_t n = sizeof(msr_list) / sizeof(msr_list[0]);

		if (l->nmsrs < n) {
			l->nmsrs = n;
			return fail(E2BIG);
		}
		l->nmsrs = n;
		memcpy(l->indices, msr_list, sizeof(msr_list));
		return 0;
	}
	case KVM_GET_MSRS:
		return msrs(arg, 0);
	case KVM_SET_MSRS:
		return msrs(arg, 1);
	case KVM_CREATE_IRQCHIP:
		has_irqchip[vm] = 1;
		return 0;
	case KVM_GET_LAPIC:
	case KVM_SET_LAPIC:
		if (!has_irqchip[vm])
			return fail(ENXIO);
		break;
	case KVM_GET_IRQCHIP:
	case KVM_SET_IRQCHIP:
		if (!has_irqchip[vm])
			return fail(ENXIO);
		if (((struct kvm_irqchip *)arg)->chip_id > KVM_IRQCHIP_IOAPIC)
			return fail(EINVAL);
		break;
	case KVM_SET_CLOCK:
		if (((struct kvm_clock_data *)arg)->flags)
			return fail(EINVAL);
		break;
	}
	/* any other: a GET answers zeros of its size, a SET or a command is taken */
	if ((_IOC_DIR(req) & _IOC_READ) && !(_IOC_DIR(req) & _IOC_WRITE) && arg)
		memset(arg, 0, _IOC_SIZE(req));
	else if (req == KVM_GET_IRQCHIP)	/* all but chip_id and its pad */
		memset((char *)arg + 8, 0, _IOC_SIZE(req) - 8);
	return 0;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int i = fake_of(fd);

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (i < 0)
		return __real_ioctl(fd, req, arg);
	return fake_ioctl(fakes[i].vm, req, arg);
}
