// SPDX-License-Identifier: GPL-2.0
/*
 * KVM's binary statistics (vmm/core/kvm_stats.c): a descriptor block built
 * here as KVM lays it out, and then the host's own, if it has /dev/kvm.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "core/kvm_stats.h"
#include "unit.h"

#define NAME_SIZE 48
#define STRIDE (sizeof(struct kvm_stats_desc) + NAME_SIZE)

static void put_desc(uint8_t *block, unsigned int i, const char *name, uint16_t size,
		     uint32_t offset)
{
	struct kvm_stats_desc d = { .flags = 0, .size = size, .offset = offset };

	memcpy(block + i * STRIDE, &d, sizeof(d));
	strncpy((char *)block + i * STRIDE + sizeof(d), name, NAME_SIZE);
}

UNIT_TEST(kvm_stats_find, "KVM binary statistics: a statistic found by its name")
{
	uint8_t block[4 * STRIDE];
	uint32_t off = 0;

	memset(block, 0, sizeof(block));
	put_desc(block, 0, "halt_wakeup", 1, 8);
	put_desc(block, 1, "halt_wait_hist", 32, 16);		/* a histogram */
	put_desc(block, 2, "blocking", 1, 272);
	put_desc(block, 3, "blocking_more", 1, 280);

	CHECK_EQ(kvm_stats_find(block, sizeof(block), 4, NAME_SIZE, "blocking", &off), 0);
	CHECK_EQ(off, 272);
	CHECK_EQ(kvm_stats_find(block, sizeof(block), 4, NAME_SIZE, "halt_wakeup", &off), 0);
	CHECK_EQ(off, 8);
	/* a prefix of a name is not that name */
	CHECK_EQ(kvm_stats_find(block, sizeof(block), 4, NAME_SIZE, "halt", &off), -1);
	CHECK_EQ(kvm_stats_find(block, sizeof(block), 4, NAME_SIZE, "missing", &off), -1);
	/* more than one value: not a number to read */
	CHECK_EQ(kvm_stats_find(block, sizeof(block), 4, NAME_SIZE, "halt_wait_hist", &off), -1);
	/* a count the block cannot hold, or names too short for the one asked */
	CHECK_EQ(kvm_stats_find(block, sizeof(block), 5, NAME_SIZE, "blocking", &off), -1);
	CHECK_EQ(kvm_stats_find(block, 3 * STRIDE, 4, NAME_SIZE, "blocking", &off), -1);
	CHECK_EQ(kvm_stats_find(block, sizeof(block), 4, 0, "blocking", &off), -1);
	CHECK_EQ(kvm_stats_find(block, sizeof(block), 4, 8, "blocking", &off), -1);
	/* a name that fills name_size with no NUL never matches past it */
	memset(block + 2 * STRIDE + sizeof(struct kvm_stats_desc), 'x', NAME_SIZE);
	CHECK_EQ(kvm_stats_find(block, sizeof(block), 4, NAME_SIZE, "blocking", &off), -1);
}

UNIT_TEST(kvm_stat_open, "KVM binary statistics: a vCPU's \"blocking\" (host /dev/kvm)")
{
	struct kvm_stat_ref ref, none;
	uint64_t value = 7;
	int kvm_fd, vm_fd, vcpu_fd;

	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	UNIT_REQUIRE(kvm_fd >= 0, "cannot open /dev/kvm: %s", strerror(errno));
	vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	vcpu_fd = vm_fd < 0 ? -1 : ioctl(vm_fd, KVM_CREATE_VCPU, 0);
	if (vcpu_fd < 0) {
		int err = errno;

		if (vm_fd >= 0)
			close(vm_fd);
		close(kvm_fd);
		UNIT_SKIP("KVM_CREATE_VM/KVM_CREATE_VCPU: %s", strerror(err));
	}
	if (ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD) <= 0) {
		close(vcpu_fd);
		close(vm_fd);
		close(kvm_fd);
		UNIT_SKIP("the host's KVM has no KVM_CAP_BINARY_STATS_FD");
	}
	if (kvm_stat_open(vcpu_fd, "blocking", &ref)) {
		close(vcpu_fd);
		close(vm_fd);
		close(kvm_fd);
		UNIT_SKIP("the host's KVM has statistics but no \"blocking\" (Linux 5.14, 5.15)");
	}
	CHECK(ref.fd >= 0, "a stats fd (%d)", ref.fd);
	/* a vCPU that never ran is not blocked in HLT */
	CHECK_EQ(kvm_stat_read(&ref, &value), 0);
	CHECK_EQ(value, 0);
	CHECK_EQ(kvm_stat_open(vcpu_fd, "no_such_statistic", &none), -1);
	CHECK_EQ(none.fd, -1);
	CHECK_EQ(kvm_stat_read(&none, &value), -1);
	kvm_stat_close(&ref);
	CHECK_EQ(ref.fd, -1);
	close(vcpu_fd);
	close(vm_fd);
	close(kvm_fd);
}
