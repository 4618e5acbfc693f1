// SPDX-License-Identifier: GPL-2.0
/*
 * SIGBUS that processes send (kill, sigqueue, tgkill) are counted by the
 * handler, never queued in the AO ring: 1500 kill -BUS once filled the ring
 * (1225 overflows) and a real AO meanwhile was dropped. Sent to this
 * process itself through the VMM's real handler.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "mce/ao_ring.h"
#include "mce/sigbus.h"
#include "unit.h"

#define SENT	(2 * AO_RING_LEN + 100)

/* Until the handler has counted the signal: SIGBUS is not queued, so one at a time. */
static int counted(unsigned long want)
{
	unsigned long spins;

	for (spins = 0; spins < 100000000UL; spins++)
		if (sigbus_foreign_count() >= want)
			return 1;
	return 0;
}

UNIT_TEST(sigbus_foreign, "SIGBUS a process sent: counted, not in the AO ring")
{
	union sigval val = { .sival_int = 0 };
	struct sigbus_event ev;
	unsigned long i, in_time = 1;
	unsigned int kept_ok = 1;
	int fd = sigbus_install(NULL);

	CHECK(fd >= 0, "sigbus_install");
	for (i = 0; i < SENT; i++) {
		if (i < SENT - 2)
			kill(getpid(), SIGBUS);
		else if (i == SENT - 2)
			sigqueue(getpid(), SIGBUS, val);
		else
			syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGBUS);
		in_time &= counted(i + 1);
	}
	CHECK(in_time, "every signal reached the handler");
	CHECK_EQ(sigbus_foreign_count(), SENT);
	CHECK_EQ(sigbus_ao_overflows(), 0);
	CHECK(!sigbus_pop_event(&ev), "no foreign signal in the AO ring");
	for (i = 0; i < SIGBUS_FOREIGN_KEPT; i++)
		kept_ok &= sigbus_foreign_kept(i, &ev) && ev.code == SI_USER &&
			   ev.sender_pid == getpid() && ev.sender_uid == getuid();
	CHECK(kept_ok, "the first %d are kept whole: SI_USER from this pid and uid",
	      SIGBUS_FOREIGN_KEPT);
	CHECK(!sigbus_foreign_kept(SIGBUS_FOREIGN_KEPT, &ev), "no more are kept");
	CHECK(sigbus_foreign_last(&ev) && ev.code == SI_TKILL && ev.sender_pid == getpid(),
	      "the last sender: tgkill from this pid (code %d, pid %d)", ev.code,
	      (int)ev.sender_pid);

	/*
	 * The kernel's AO still gets its ring slot after the flood (only a
	 * process itself may queue a positive si_code, rt_sigqueueinfo(2)).
	 */
	{
		siginfo_t si = { .si_signo = SIGBUS, .si_code = BUS_MCEERR_AO };

		si.si_addr = (void *)0x7f0000001000UL;
		si.si_addr_lsb = 12;
		syscall(SYS_rt_sigqueueinfo, getpid(), SIGBUS, &si);
		CHECK(sigbus_pop_event(&ev) && ev.code == BUS_MCEERR_AO &&
		      ev.addr == 0x7f0000001000UL && ev.lsb == 12,
		      "the AO sent after them is in the ring");
		CHECK_EQ(sigbus_foreign_count(), SENT);
	}
	signal(SIGBUS, SIG_DFL);
	signal(SIG_VCPU_KICK, SIG_DFL);
	close(fd);
}
