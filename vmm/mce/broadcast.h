/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MCA broadcast: an #MC that a vCPU takes reaches every other vCPU too, as
 * bank 1 VAL|UC without EN. A Linux guest's handler on the first CPU waits
 * for all of them (mce_start()) and panics when they do not come.
 */
#ifndef HWLAB_BROADCAST_H
#define HWLAB_BROADCAST_H

struct vcpu;

/* After v took an uncorrected #MC: note it for every other open vCPU, kick them. */
void mce_broadcast_send(struct vcpu *v);
/*
 * On v's thread: another vCPU's #MC, passed on; several that came since
 * one exit are one. 0, or -1 when the VM stops (reported).
 */
int mce_broadcast_deliver(struct vcpu *v);

#endif
