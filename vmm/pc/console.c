// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "pc/console.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/device.h"
#include "core/outq.h"
#include "core/report.h"
#include "core/vm.h"
#include "log.h"
#include "pc/console_io.h"
#include "pc/irqchip.h"
#include "pc/uart_8250.h"

/*
 * The console's output: a queue and its writer thread, so that a console
 * nobody reads blocks neither the vCPU writing THR nor the monitor.
 */
#define CONSOLE_QUEUE_BYTES	(256U << 10)

static struct outq console_out = OUTQ_INIT(-1);
static struct uart_8250 uart;
static int console_in_fd = -1;	/* --console-in, read by its own thread */

static void uart_irq(void *ctx, int level)
{
	irqchip_set_line(ctx, UART_COM1_IRQ, level);
}

/* The writer caught up after drops, or the console's reader went away. */
static void console_notice(struct outq *q)
{
	int broken = outq_broken(q);
	unsigned long lines, bytes;

	lines = outq_dropped(q, &bytes);
	report("console_dropped", "\"lines\":%lu,\"bytes\":%lu,\"reason\":\"%s%s\"", lines, bytes,
	       broken ? "the console cannot be written any more: " :
			"the console was not read fast enough",
	       broken ? strerror(broken) : "");
}

int console_open(struct vm *vm, const char *out_path, const char *in_path, int stamp)
{
	/* never stdout: that is the report channel, and the guest is not to write it */
	console_out.fd = out_path ? console_open_output(out_path) : console_default_output();
	if (console_out.fd < 0)
		return -1;
	/* opened with the other files, before the VM exists: a bad path fails early */
	console_in_fd = in_path ? console_open_input(in_path) : -1;
	if (in_path && console_in_fd < 0)
		return -1;
	console_out.notice = console_notice;
	if (outq_start(&console_out, CONSOLE_QUEUE_BYTES))
		return -1;
	uart_init(&uart, &console_out, uart_irq, vm);
	uart.stamp = stamp;
	return 0;
}

static int uart_dev_io(struct vcpu *v, void *opaque, uint64_t port, int is_write, uint8_t *data,
		       unsigned int len)
{
	unsigned int i;

	(void)v;
	for (i = 0; i < len; i++)
		uart_io(opaque, port + i - UART_COM1_BASE, is_write, &data[i]);
	return 0;
}

static int uart_dev_save(void *opaque, struct device_stream *out)
{
	return uart_save(opaque, out);
}

static int uart_dev_restore(void *opaque, struct device_stream *in)
{
	return uart_restore(opaque, in);
}

/*
 * No reset hook: a reboot has always kept the UART's registers (Linux's
 * 8250 driver programs them again at boot).
 */
static const struct device uart_device = {
	.name = "uart-com1", .opaque = &uart, .io = uart_dev_io,
	.save = uart_dev_save, .restore = uart_dev_restore,
};

int console_register(struct vm *vm)
{
	return device_register(&vm->devices, &uart_device, DEVICE_PIO, UART_COM1_BASE, UART_NR_REGS);
}

/*
 * The console's input: bytes go into the UART's receive FIFO as fast as the
 * guest takes them (a full FIFO waits a millisecond), until end of file.
 * The fd may be a FIFO opened O_NONBLOCK before any writer came: poll(2)
 * waits for one (Linux reports no hangup on a FIFO that never had a
 * writer), where read(2) would see end of file at once.
 */
static void *console_input(void *arg)
{
	struct vm *vm = arg;
	struct pollfd pfd = { .fd = console_in_fd, .events = POLLIN };
	uint8_t buf[256];
	ssize_t n;

	for (;;) {
		unsigned int done = 0;

		if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
			pr_errno("waiting for the console input");
			break;
		}
		n = read(console_in_fd, buf, sizeof(buf));
		if (!n)
			break;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			pr_errno("reading the console input");
			break;
		}
		while (done < n && !vm->stop) {
			unsigned int took = uart_receive(&uart, buf + done, n - done);

			done += took;
			if (!took)
				usleep(1000);
		}
	}
	return NULL;
}

int console_start_input(struct vm *vm)
{
	pthread_t t;
	int e;

	if (console_in_fd < 0)
		return 0;
	e = pthread_create(&t, NULL, console_input, vm);
	if (e) {
		pr_err("pthread_create for the console input: %s", strerror(e));
		return -1;
	}
	pthread_detach(t);
	return 0;
}

void console_flush(void)
{
	uart_flush(&uart);
}

void console_drain(uint64_t deadline)
{
	outq_drain(&console_out, deadline);
}

unsigned long console_dropped(void)
{
	return outq_dropped(&console_out, NULL);
}
