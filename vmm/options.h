/* SPDX-License-Identifier: GPL-2.0 */
/* hwlab-vmm's command line: what a run is asked to do. */
#ifndef HWLAB_OPTIONS_H
#define HWLAB_OPTIONS_H

#include <stdio.h>

#include "core/vm_options.h"

/*
 * Parse argv into o (defaults first). Returns 0, or -1 after a message on
 * stderr (exit status 2: the command line was wrong).
 */
int options_parse(int argc, char **argv, struct vmm_options *o);
void options_usage(FILE *f);
const char *options_mce_kill_name(int mce_kill);

#endif
