/* SPDX-License-Identifier: GPL-2.0 */
/*
 * userfaultfd's UFFDIO_POISON (Linux 6.6; kernel patches 0011-0018 backport
 * it to our 6.1) for a build host whose <linux/userfaultfd.h> predates it:
 * the kernel uapi's values (include/uapi/linux/userfaultfd.h of the series'
 * patch 16/18, as upstream's fc71884a5f59). For the VMM's destination
 * (vmm/migrate/poison_keep.c) and the outer VM's uffd_poison test alike.
 */
#ifndef HWLAB_UFFD_POISON_UAPI_H
#define HWLAB_UFFD_POISON_UAPI_H

#include <linux/userfaultfd.h>

#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)
#endif
#ifndef _UFFDIO_POISON
#define _UFFDIO_POISON (0x08)
#endif
#ifndef UFFDIO_POISON
struct uffdio_poison {
	struct uffdio_range range;
#define UFFDIO_POISON_MODE_DONTWAKE ((__u64)1 << 0)
	__u64 mode;
	__s64 updated;
};
#define UFFDIO_POISON _IOWR(UFFDIO, _UFFDIO_POISON, struct uffdio_poison)
#endif

#endif
