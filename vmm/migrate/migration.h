/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live migration between two hwlab-vmm processes over a Unix socket (issue
 * #21): the state stream (migrate/stream.h) with RAM sent in rounds while
 * the guest runs.
 *
 * The source (--migrate-to unix:PATH, on SIGUSR2): connect; the config
 * section; KVM's dirty log on; every page of RAM (round 0) while the guest
 * runs; then each round the pages written since the last, until a round
 * has at most MIGRATE_STOP_PAGES or MIGRATE_MAX_ROUNDS went by; then pause
 * (the downtime starts), the last dirty pages, every page on the poison
 * list as poisoned, the machine's sections, the end; and wait for the
 * destination's answer: on 'K' the source sends 'G' and stops, and only
 * then does the destination run the guest; on anything else, or nothing,
 * the source shuts the socket (a late 'K' finds no 'G': the destination
 * exits) and resumes the guest, saying why. Never both.
 * A reboot of the guest meanwhile (the VMM rewrote memory it does not log)
 * fails the migration the same way.
 *
 * The destination (--incoming unix:PATH): listen (a new socket file, not
 * through a symlink), take one connection, restore as from a file, answer
 * 'K' and start the guest once the source's 'G' comes, or answer 'E' (or
 * get no 'G') and exit.
 */
#ifndef HWLAB_MIGRATE_MIGRATION_H
#define HWLAB_MIGRATE_MIGRATION_H

#include "migrate/snapshot.h"

struct vm;

#define MIGRATE_MAX_ROUNDS	30
#define MIGRATE_STOP_PAGES	512
#define MIGRATE_ACK_OK		'K'	/* destination: restored, ready to run */
#define MIGRATE_ACK_REFUSED	'E'	/* destination: refused, exits */
#define MIGRATE_GO		'G'	/* source: stopped for good; run it */

/*
 * The source: the whole migration (the report line "migrate"). 1 when the
 * destination took the guest (the caller stops it here), 0 when the guest
 * runs on here (failed, reported). between_rounds: the caller's monitor
 * work (the AOs the kernel sent meanwhile), called after every round and
 * once more with the guest paused, so that a page poisoned during the
 * copy is on the list the last round sends as poisoned; also after every
 * RAM section of a round (about 1 MiB). stopped: the VMM is asked to stop
 * (the migration ends, the guest runs on here until the stop).
 */
int migration_send(struct vm *vm, const char *to, void (*between_rounds)(struct vm *vm),
		   int (*stopped)(void));

/*
 * The destination: the listening socket at to ("unix:PATH"), or -1 after
 * a message. The caller waits for a connection (poll) so that a stop
 * signal still ends the wait.
 */
int migration_listen(const char *to);
/*
 * On the accepted connection: restore (report "incoming"), answer. 0 (the
 * caller starts the guest), or -1 after a message and a refused line.
 */
int migration_receive(struct vm *vm, int conn, const char *to, struct restore_result *r,
		      int (*stopped)(void));
/* The socket file made by migration_listen(), removed. */
void migration_unlink(const char *to);

#endif
