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
	int fd = open("/dev/mcelog", O_RDONLY), len = 0;
	struct mce *buf;

	setvbuf(stdout, NULL, _IOLBF, 0);
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

		for (i = 0; n > 0 && i < n / (ssize_t)sizeof(*buf); i++)
			printf("INNER-MCELOG cpu=%u bank=%u mcgstatus=%#llx status=%#llx addr=%#llx "
			       "misc=%#llx severity=%u\n", buf[i].extcpu, buf[i].bank,
			       (unsigned long long)buf[i].mcgstatus,
			       (unsigned long long)buf[i].status, (unsigned long long)buf[i].addr,
			       (unsigned long long)buf[i].misc, buf[i].severity);
		if (n < 0) {
			perror("mcelog_watch: read");
			return 1;
		}
		poll(&p, 1, -1);
	}
}
