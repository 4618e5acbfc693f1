/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Linux guest's console files: --console (output) and --console-in.
 * hwlab-vmm often runs as root and the guest's bytes are hostile data, so
 * the output is never opened through a symlink, never appended to another
 * user's file, to a file with other names (hard links) or to anything in
 * the memslot tables' directory; and neither path may block start-up.
 */
#ifndef HWLAB_CONSOLE_IO_H
#define HWLAB_CONSOLE_IO_H

/*
 * Open path for appending the guest's console: a regular file (created
 * 0600 if new), a FIFO that has a reader, a terminal or /dev/null. Returns
 * the fd (O_NONBLOCK), or -1 after a message that says why not.
 */
int console_open_output(const char *path);
/*
 * Open path ("-": stdin) for the guest's console input, without waiting for
 * a FIFO's writer (the input thread waits in poll(2) instead). Returns the
 * fd, or -1 after a message.
 */
int console_open_input(const char *path);
/*
 * The console when --console is not given: stderr, never stdout (the
 * report channel). Refused (-1 after a message) when stderr is stdout's
 * file (2>&1 into a pipe or file), where guest lines would read as reports.
 */
int console_default_output(void);

#endif
