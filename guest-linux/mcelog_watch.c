// SPDX-License-Identifier: GPL-2.0
/*
 * Runs in the Linux guest: every machine-check record the guest's kernel
 * logs, as its /dev/mcelog hands it out, one console line each:
 *
 *   INNER-MCELOG cpu=C bank=B mcgstatus=0x.. status=0x.. addr=0x.. misc=0x.. severity=S
 *
 * This is what the guest read from the banks, for an #MC and for an error
 * its poll found alike (an AMD deferred error makes no "Machine Check
 * Exception" console line): the values the side-by-side with QEMU holds
 * against each other. Records the kernel logged before this started (at
 * boot) come out first.
 *
 * The lines go through /dev/kmsg, as error-level kernel messages: the
 * kernel prints its own machine-check lines at the same moment, and a
 * line written to the console tty can get one of those printed into its
 * middle (seen: "...mcgstatus=0x7 status=0[    5.30] Memory failure: ...").
 * Kernel messages reach the console whole. The guest boots with
 * printk.devkmsg=on so that a burst is not rate-limited away.
 */
#include <asm/mce.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
	int fd = open("/dev/mcelog", O_RDONLY), kmsg = open("/dev/kmsg", O_WRONLY), len = 0;
	struct mce *buf;

	if (fd < 0 || ioctl(fd, MCE_GET_LOG_LEN, &len) || len <= 0) {
		perror("mcelog_watch: /dev/mcelog");
		return 1;
	}
	/* the driver hands out only whole-log reads */
	buf = calloc(len, sizeof(*buf));
	if (!buf)
		return 1;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n = read(fd, buf, len * sizeof(*buf));
		int i;

		for (i = 0; n > 0 && i < n / (ssize_t)sizeof(*buf); i++) {
			char line[256];
			int len_line = snprintf(line, sizeof(line), "<3>INNER-MCELOG cpu=%u bank=%u "
						"mcgstatus=%#llx status=%#llx addr=%#llx misc=%#llx "
						"severity=%u\n", buf[i].extcpu, buf[i].bank,
						(unsigned long long)buf[i].mcgstatus,
						(unsigned long long)buf[i].status,
						(unsigned long long)buf[i].addr,
						(unsigned long long)buf[i].misc, buf[i].severity);

			/* one write, one kernel message; without /dev/kmsg, the console */
			if (kmsg < 0 || write(kmsg, line, len_line) != len_line)
				fputs(line + 3, stdout), fflush(stdout);
		}
		if (n < 0) {
			perror("mcelog_watch: read");
			return 1;
		}
		poll(&p, 1, -1);
	}
}
