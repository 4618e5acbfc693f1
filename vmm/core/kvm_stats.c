// SPDX-License-Identifier: GPL-2.0
/* One statistic of KVM's binary statistics (kvm_stats.h). */
#include "core/kvm_stats.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

int kvm_stats_find(const uint8_t *descs, size_t len, uint32_t num_desc, uint32_t name_size,
		   const char *name, uint32_t *offset)
{
	size_t stride = sizeof(struct kvm_stats_desc) + name_size;
	size_t want = strlen(name);
	uint32_t i;

	if (!name_size || want >= name_size || num_desc > len / stride)
		return -1;
	for (i = 0; i < num_desc; i++) {
		struct kvm_stats_desc d;
		const char *n = (const char *)descs + i * stride + sizeof(d);

		memcpy(&d, descs + i * stride, sizeof(d));
		/* the name is NUL-terminated within name_size, or not ours */
		if (memcmp(n, name, want) || n[want] != '\0')
			continue;
		if (d.size != 1)
			return -1;
		*offset = d.offset;
		return 0;
	}
	return -1;
}

int kvm_stat_open(int vcpu_fd, const char *name, struct kvm_stat_ref *ref)
{
	struct kvm_stats_header h;
	uint8_t *descs = NULL;
	size_t len;
	uint32_t offset;
	int fd;

	ref->fd = -1;
	fd = ioctl(vcpu_fd, KVM_GET_STATS_FD, NULL);
	if (fd < 0)
		return -1;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.num_desc > 4096 ||
	    h.name_size > 4096)
		goto fail;
	len = (size_t)h.num_desc * (sizeof(struct kvm_stats_desc) + h.name_size);
	descs = malloc(len ? len : 1);
	if (!descs || pread(fd, descs, len, h.desc_offset) != (ssize_t)len ||
	    kvm_stats_find(descs, len, h.num_desc, h.name_size, name, &offset))
		goto fail;
	free(descs);
	ref->fd = fd;
	ref->pos = (uint64_t)h.data_offset + offset;
	return 0;
fail:
	free(descs);
	close(fd);
	return -1;
}

int kvm_stat_read(const struct kvm_stat_ref *ref, uint64_t *value)
{
	if (ref->fd < 0)
		return -1;
	return pread(ref->fd, value, sizeof(*value), (off_t)ref->pos) == (ssize_t)sizeof(*value) ?
	       0 : -1;
}

void kvm_stat_close(struct kvm_stat_ref *ref)
{
	if (ref->fd >= 0)
		close(ref->fd);
	ref->fd = -1;
}
