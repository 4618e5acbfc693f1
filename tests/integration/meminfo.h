/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the static test programs that run inside the outer VM
 * (madvise_sigbus, corrupt_va_probe): the kernel's count of poisoned
 * memory, which every check of "poisoned" or "left alone" compares.
 */
#ifndef HWLAB_TESTS_MEMINFO_H
#define HWLAB_TESTS_MEMINFO_H

#include <stdio.h>

/* HardwareCorrupted from /proc/meminfo in kB, or -1 when unreadable. */
static inline long hardware_corrupted_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HardwareCorrupted: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

#endif
