// SPDX-License-Identifier: GPL-2.0
/*
 * Runs inside the outer VM: holds one thread of another process in a ptrace
 * stop, caught in ioctl(2) (a vCPU thread in KVM_RUN), until that process
 * exits. A vCPU thread that never leaves KVM_RUN is what a stuck vCPU looks
 * like to the VMM's stop; stopping it only inside the ioctl means it holds
 * none of the VMM's locks (it takes none around KVM_RUN), as a thread stuck
 * in the kernel would not.
 *
 * Usage: thread_stop TID   prints "thread_stop: TID held in ioctl" once held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int wait_stop(pid_t tid)
{
	int status;

	if (waitpid(tid, &status, __WALL) != tid)
		return -1;
	return WIFSTOPPED(status) ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct timespec ms = { 0, 1000000 };
	pid_t tid;
	int tries;

	if (argc != 2 || (tid = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: thread_stop TID\n");
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
		perror("thread_stop: PTRACE_SEIZE");
		return 1;
	}
	for (tries = 0; tries < 10000; tries++) {
		struct user_regs_struct r;

		if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || wait_stop(tid)) {
			perror("thread_stop: PTRACE_INTERRUPT");
			return 1;
		}
		if (ptrace(PTRACE_GETREGS, tid, 0, &r)) {
			perror("thread_stop: PTRACE_GETREGS");
			return 1;
		}
		/* stopped on its way out of ioctl(2), interrupted: it was in KVM_RUN */
		if (r.orig_rax == SYS_ioctl) {
			printf("thread_stop: %d held in ioctl after %d tries\n", tid, tries + 1);
			fflush(stdout);
			/* until the process exits; a signal sent to it stops it again */
			for (;;) {
				int status;

				if (waitpid(tid, &status, __WALL) != tid)
					return errno == ECHILD ? 0 : 1;
				if (WIFEXITED(status) || WIFSIGNALED(status))
					return 0;
			}
		}
		if (ptrace(PTRACE_CONT, tid, 0, 0)) {
			perror("thread_stop: PTRACE_CONT");
			return 1;
		}
		nanosleep(&ms, NULL);
	}
	fprintf(stderr, "thread_stop: %d never caught in ioctl\n", tid);
	return 1;
}
