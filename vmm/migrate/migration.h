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
 * The destination (--incoming unix:PATH, migrate/incoming.c): listen (a
 * new socket file, not through a symlink, made relative to its directory's
 * fd; at the end removed there, only if it is still that file), take one
 * connection, restore as from a file, answer
 * 'K' and start the guest once the source's 'G' comes, or answer 'E' (or
 * get no 'G') and exit.
 */
#ifndef HWLAB_MIGRATE_MIGRATION_H
#define HWLAB_MIGRATE_MIGRATION_H

#include <sys/types.h>

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

/* The destination's listening socket, and what its removal needs. */
struct migration_listener {
	int fd;			/* non-blocking */
	int dirfd;		/* the socket file's directory, O_PATH */
	char name[108];		/* the socket file's name in it */
	dev_t dev;		/* the socket file made, for the removal */
	ino_t ino;
	int bound;
};

/* Listen at to ("unix:PATH"). 0, or -1 after a message (nothing left behind). */
int migration_listen(const char *to, struct migration_listener *l);
/*
 * Wait for a source, asking stopped() every STREAM_POLL_MS. The connection,
 * or -1 after a message (stopped, or an error).
 */
int migration_accept(struct migration_listener *l, int (*stopped)(void));
/*
 * Close the listener and remove its socket file, relative to its directory
 * and only if the name still is that file (a swapped path or a replaced
 * file is left alone).
 */
void migration_unlink(struct migration_listener *l);
/*
 * On the accepted connection: restore (report "incoming"), answer. 0 (the
 * caller starts the guest), or -1 after a message and a refused line.
 */
int migration_receive(struct vm *vm, int conn, const char *to, struct restore_result *r,
		      int (*stopped)(void));

#endif
