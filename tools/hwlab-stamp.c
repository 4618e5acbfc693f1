// SPDX-License-Identifier: GPL-2.0
/*
 * hwlab-stamp: copy lines from stdin to stdout, each prefixed with
 * "[t_ns=N] ", N the CLOCK_MONOTONIC time its last byte arrived: the clock
 * and the prefix of hwlab-vmm's --console-stamp. A VMM that cannot stamp
 * its own console (QEMU) gets its serial console and its stderr piped
 * through this, so that both VMMs' lines are timed alike.
 *
 *   qemu-system-x86_64 ... -serial stdio 2>&1 | hwlab-stamp >console
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"

int main(int argc, char **argv)
{
	char line[4096];
	int at_start = 1;

	(void)argv;
	log_prog = "hwlab-stamp";
	if (argc != 1) {
		fprintf(stderr, "usage: COMMAND | hwlab-stamp >FILE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a line longer than the buffer comes out in pieces, the first one stamped */
	while (fgets(line, sizeof(line), stdin)) {
		size_t n = strcspn(line, "\n"), i, j;
		int complete = line[n] != 0;

		/*
		 * A line ends at its newline only, and its carriage returns go: a
		 * firmware's line that ends in a bare CR ("Probing EDD ... ok"
		 * from QEMU's SeaBIOS) runs into the guest's next line, which
		 * cutting at the first CR dropped whole (an INNER-BOOT line lost:
		 * a boot that looked stalled).
		 */
		line[n] = 0;
		for (i = j = 0; i < n; i++)
			if (line[i] != '\r')
				line[j++] = line[i];
		line[j] = 0;
		if (at_start)
			printf("[t_ns=%" PRIu64 "] ", monotonic_ns());
		fputs(line, stdout);
		if (complete)
			putchar('\n');
		at_start = complete;
	}
	return 0;
}
