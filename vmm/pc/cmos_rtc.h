/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Enough of the CMOS RTC (ports 0x70-0x71) for a Linux guest's clock: the
 * time registers read the host's UTC, the status registers a running
 * 24-hour BCD clock with a good battery, everything else 0.
 */
#ifndef HWLAB_CMOS_RTC_H
#define HWLAB_CMOS_RTC_H

#include <stdint.h>

struct vm;

/* On the VM's device bus; 0, or -1 after a message. */
int cmos_rtc_register(struct vm *vm);
/* What register index (its low 7 bits) reads now. Host time; not pure. */
uint8_t cmos_rtc_read(uint8_t index);

#endif
