/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A 16550A UART (the PC's COM1 at 0x3f8, IRQ 4): the Linux guest's
 * console. Enough of the chip for Linux's 8250 driver to detect it and to
 * drive it with interrupts: the transmitter is always ready, and its
 * "transmit holding register empty" interrupt is what lets a userspace
 * write to /dev/console make progress. Input arrives with uart_receive().
 * Thread-safe: vCPU threads and an input thread may call it at once.
 */
#ifndef HWLAB_UART_8250_H
#define HWLAB_UART_8250_H

#include <pthread.h>
#include <stdint.h>

#include "core/outq.h"

#define UART_COM1_BASE		0x3f8
#define UART_COM1_IRQ		4
#define UART_NR_REGS		8
#define UART_RX_FIFO		64
#define UART_LINE_MAX		256

struct uart_8250 {
	pthread_mutex_t lock;
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	int thr_empty_pending;		/* the THRE interrupt is owed */
	uint8_t rx[UART_RX_FIFO];
	unsigned int rx_head, rx_len;
	int irq_level;
	/* where the line goes: 0/1 from set_irq; ctx is the caller's */
	void (*set_irq)(void *ctx, int level);
	void *ctx;
	struct outq *out;		/* console output, a line at a time */
	int stamp;			/* prefix each line with its CLOCK_MONOTONIC time */
	char line[UART_LINE_MAX];
	unsigned int line_len;
	int mid_line;			/* what went out last did not end its line */
	unsigned long bytes_out;
};

/*
 * out: where whole lines go (queued: a console nobody reads never blocks the
 * vCPU that writes THR; a line that does not fit is dropped and counted).
 */
void uart_init(struct uart_8250 *u, struct outq *out, void (*set_irq)(void *, int), void *ctx);
/* A guest access to register offset (0..7) of the UART; *data in or out. */
void uart_io(struct uart_8250 *u, unsigned int offset, int is_write, uint8_t *data);
/* Bytes for the guest to read; returns how many fitted in the FIFO. */
unsigned int uart_receive(struct uart_8250 *u, const uint8_t *buf, unsigned int len);
/* Write out a partial last line (at exit). */
void uart_flush(struct uart_8250 *u);
struct device_stream;
/* The chip's state as the guest sees it, into or out of a device stream; 0 or -1. */
int uart_save(struct uart_8250 *u, struct device_stream *out);
int uart_restore(struct uart_8250 *u, struct device_stream *in);

#endif
