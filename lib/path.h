/* SPDX-License-Identifier: GPL-2.0 */
/* Paths the VMM creates or writes, opened relative to their directory. */
#ifndef HWLAB_PATH_H
#define HWLAB_PATH_H

/*
 * The directory path's last component is in, opened O_PATH|O_DIRECTORY
 * (following symlinks on the way: where they lead is what counts), with
 * *name set to that component. Opening and later removing the file
 * relative to this fd keeps it in the directory that was checked, whatever
 * is renamed or swapped on the path meanwhile. Returns the fd, or -1 with
 * errno set.
 */
int path_open_parent(const char *path, const char **name);

/*
 * A file the caller only reads, opened without waiting (O_NONBLOCK: a FIFO
 * would block open() until a writer came) and only if it is a regular
 * file. The fd (blocking again), or -1 with errno (EINVAL: not a regular
 * file).
 */
int path_open_regular(const char *path, int flags);

#endif
