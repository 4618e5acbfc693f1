/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The whole guest in the state stream (migrate/stream.h), and back: what a
 * snapshot file and a migration carry (issue #21). Sections in this order:
 * config (the machine it needs), vm (KVM's clock), devices (each device's
 * own record), one vcpu each, poison (the poisoned pages and which the
 * guest was told of), RAM (migrate/ram.h), end. A restore checks each
 * section before it acts on it and starts no vCPU unless all came whole.
 */
#ifndef HWLAB_MIGRATE_SNAPSHOT_H
#define HWLAB_MIGRATE_SNAPSHOT_H

#include <stdint.h>

#include "core/poison_list.h"
#include "migrate/poison_keep.h"
#include "migrate/ram.h"

struct vm;
struct stream;

/* What a save sent, for its report line. */
struct snapshot_stats {
	struct ram_counts ram;
	uint64_t bytes;			/* on the wire, headers included */
	unsigned int sections;
	unsigned int poisoned_heard;	/* on the VMM's list */
	unsigned int poisoned_told;	/* of those, told to the guest */
	uint64_t downtime_ns;		/* vCPUs paused */
};

/*
 * The config section: the machine the stream needs (first in every
 * stream). 0, or -1 after a message.
 */
int snapshot_put_config(struct vm *vm, struct stream *s);
/*
 * With every vCPU paused: the vm, devices, vcpu and poison sections (not
 * the RAM: a migration sends it in rounds). 0, or -1 after a message.
 */
int snapshot_put_machine(struct vm *vm, struct stream *s, struct snapshot_stats *st);
/* With every vCPU paused: config, machine, then all of RAM. */
int snapshot_save_state(struct vm *vm, struct stream *s, struct snapshot_stats *st);

/* What a restore found, and what it leaves for after the vCPUs start. */
struct restore_result {
	struct ram_counts ram;
	uint64_t bytes;
	unsigned int sections;
	unsigned int poisoned_told;	/* the guest knew of these at the source */
	/*
	 * Pages the guest is owed an AO for here: heard at the source but not
	 * yet told, or left without a marker (zeroed) and not told
	 */
	struct poison_list to_tell;
	struct poison_list told;	/* the restore's own: told at the source */
	struct poison_keep_result keep;
};

/*
 * Read the stream into a VM made with the same options (machine_setup()),
 * before its vCPUs run: every section to its end, then the poison kept
 * (migrate/poison_keep.h). 0, or -1 after a message (the guest must not
 * start).
 */
int snapshot_restore_state(struct vm *vm, struct stream *s, struct restore_result *r);
/* After the vCPUs started: the AOs the source still owed the guest. */
void snapshot_tell_owed(struct vm *vm, struct restore_result *r);

/*
 * --snapshot FILE: pause, write the stream to FILE (through a new file
 * beside it, renamed into place when whole), resume, report "snapshot".
 * 0, or -1 after a message and a report line (the guest runs on).
 */
int snapshot_take(struct vm *vm, const char *path);
/* The restore's report line (event "restore" or "incoming"), from a path or a peer. */
void snapshot_report_restore(const char *event, const char *from, const struct restore_result *r,
			     uint64_t ns);
/* A refused restore's line (the reason is in the VMM's error message). */
void snapshot_report_refused(const char *event, const char *from);
/* --restore FILE: open (no symlink), read, report "restore". 0, or -1 after a message. */
int snapshot_restore_file(struct vm *vm, const char *path, struct restore_result *r);

#endif
