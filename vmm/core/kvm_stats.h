/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One statistic of KVM's binary statistics (KVM_GET_STATS_FD, since Linux
 * 5.14; Documentation/virt/kvm/api.rst "KVM_GET_STATS_FD"), read without
 * disturbing the vCPU: the file holds a header, a descriptor per statistic
 * (name included) and the values, each a u64 at its descriptor's offset.
 * The KVM selftests read it the same way (kvm_util.c, read_stat_data()).
 */
#ifndef HWLAB_KVM_STATS_H
#define HWLAB_KVM_STATS_H

#include <stddef.h>
#include <stdint.h>

struct kvm_stat_ref {
	int fd;			/* the stats fd, or -1: none */
	uint64_t pos;		/* the value's position in it */
};

/*
 * In a descriptor block (num_desc descriptors, each a struct kvm_stats_desc
 * and name_size bytes of name), the value offset of the one-item statistic
 * called name: 0 with *offset set, or -1 (absent, a histogram, or a block
 * that does not hold its count). Pure: len bounds every read.
 */
int kvm_stats_find(const uint8_t *descs, size_t len, uint32_t num_desc, uint32_t name_size,
		   const char *name, uint32_t *offset);

/*
 * Open vcpu_fd's statistics and find name: 0, or -1 with ref->fd -1 (a
 * kernel without them, or without that one; no message: the caller has a
 * way without it).
 */
int kvm_stat_open(int vcpu_fd, const char *name, struct kvm_stat_ref *ref);
/* The statistic's value now: 0, or -1. */
int kvm_stat_read(const struct kvm_stat_ref *ref, uint64_t *value);
void kvm_stat_close(struct kvm_stat_ref *ref);

#endif
