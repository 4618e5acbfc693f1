// SPDX-License-Identifier: GPL-2.0
#include "pc/uart_8250.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "core/device.h"

/* Register offsets and bits (Linux include/uapi/linux/serial_reg.h). */
#define REG_RX_TX	0	/* RBR / THR; DLL with LCR.DLAB */
#define REG_IER		1	/* DLM with LCR.DLAB */
#define REG_IIR_FCR	2
#define REG_LCR		3
#define REG_MCR		4
#define REG_LSR		5
#define REG_MSR		6
#define REG_SCR		7

#define IER_RDI		0x01	/* receive data available */
#define IER_THRI	0x02	/* transmit holding register empty */
#define IER_MASK	0x0f
#define IIR_NO_INT	0x01
#define IIR_THRI	0x02
#define IIR_RDI		0x04
#define IIR_FIFO_ON	0xc0	/* a 16550A with its FIFOs enabled */
#define FCR_ENABLE	0x01
#define FCR_CLEAR_RX	0x02
#define LCR_DLAB	0x80
#define MCR_LOOP	0x10
#define MCR_MASK	0x1f
#define LSR_DR		0x01
#define LSR_THRE	0x20
#define LSR_TEMT	0x40
#define MSR_CTS		0x10
#define MSR_DSR		0x20
#define MSR_RI		0x40
#define MSR_DCD		0x80

void uart_init(struct uart_8250 *u, struct outq *out, void (*set_irq)(void *, int), void *ctx)
{
	memset(u, 0, sizeof(*u));
	pthread_mutex_init(&u->lock, NULL);
	u->out = out;
	u->set_irq = set_irq;
	u->ctx = ctx;
	u->lcr = 0x03;		/* 8N1, as firmware leaves it */
}

/* The interrupt the chip signals now, highest priority first. */
static uint8_t pending_iir(const struct uart_8250 *u)
{
	if ((u->ier & IER_RDI) && u->rx_len)
		return IIR_RDI;
	if ((u->ier & IER_THRI) && u->thr_empty_pending)
		return IIR_THRI;
	return IIR_NO_INT;
}

/* Drive the IRQ line from the chip state; only changes reach KVM. */
static void update_irq(struct uart_8250 *u)
{
	int level = pending_iir(u) != IIR_NO_INT;

	if (level != u->irq_level) {
		u->irq_level = level;
		if (u->set_irq)
			u->set_irq(u->ctx, level);
	}
}

/*
 * A line at a time, so that console lines never interleave mid-line with
 * other output on a shared file. With stamp, each line starts with the time
 * its last byte (or, for a line longer than UART_LINE_MAX, its first part's
 * last byte) left the guest, on the clock the VMM's reports and the tools
 * use: the one measure of when a guest said something. Only a line's start
 * is stamped: the rest of a long line goes out as it is.
 */
static void write_out(struct uart_8250 *u)
{
	char buf[40 + UART_LINE_MAX];
	int n = 0;

	if (u->stamp && !u->mid_line)
		n = snprintf(buf, 40, "[t_ns=%llu] ", (unsigned long long)monotonic_ns());
	memcpy(buf + n, u->line, u->line_len);
	n += u->line_len;
	u->mid_line = u->line[u->line_len - 1] != '\n';
	u->line_len = 0;
	/* best effort: a console that cannot take it must not stop the guest */
	outq_put(u->out, buf, n);
}

static void transmit(struct uart_8250 *u, uint8_t c)
{
	u->bytes_out++;
	if (u->mcr & MCR_LOOP) {
		/* loopback: what is sent is received */
		if (u->rx_len < UART_RX_FIFO)
			u->rx[(u->rx_head + u->rx_len++) % UART_RX_FIFO] = c;
	} else if (c != '\r') {
		/* the tty's CR before LF: the console is a file of lines */
		u->line[u->line_len++] = c;
		if (c == '\n' || u->line_len == UART_LINE_MAX)
			write_out(u);
	}
	/* the byte left at once: the holding register is empty again */
	u->thr_empty_pending = 1;
}

static uint8_t modem_status(const struct uart_8250 *u)
{
	uint8_t m = u->mcr;

	if (!(u->mcr & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS;	/* a terminal is always there */
	/* loopback wires DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD (driver's probe) */
	return ((m & 0x01) ? MSR_DSR : 0) | ((m & 0x02) ? MSR_CTS : 0) |
	       ((m & 0x04) ? MSR_RI : 0) | ((m & 0x08) ? MSR_DCD : 0);
}

static void reg_write(struct uart_8250 *u, unsigned int offset, uint8_t v)
{
	switch (offset) {
	case REG_RX_TX:
		if (u->lcr & LCR_DLAB)
			u->dll = v;
		else
			transmit(u, v);
		break;
	case REG_IER:
		if (u->lcr & LCR_DLAB) {
			u->dlm = v;
			break;
		}
		/* enabling THRI with the transmitter empty raises it at once */
		if ((v & IER_THRI) && !(u->ier & IER_THRI))
			u->thr_empty_pending = 1;
		u->ier = v & IER_MASK;
		break;
	case REG_IIR_FCR:
		u->fcr = v;
		if (v & FCR_CLEAR_RX)
			u->rx_len = 0;
		break;
	case REG_LCR:
		u->lcr = v;
		break;
	case REG_MCR:
		u->mcr = v & MCR_MASK;
		break;
	case REG_SCR:
		u->scr = v;
		break;
	default:		/* LSR, MSR: read-only */
		break;
	}
}

static uint8_t reg_read(struct uart_8250 *u, unsigned int offset)
{
	uint8_t v = 0;

	switch (offset) {
	case REG_RX_TX:
		if (u->lcr & LCR_DLAB)
			return u->dll;
		if (u->rx_len) {
			v = u->rx[u->rx_head];
			u->rx_head = (u->rx_head + 1) % UART_RX_FIFO;
			u->rx_len--;
		}
		return v;
	case REG_IER:
		return (u->lcr & LCR_DLAB) ? u->dlm : u->ier;
	case REG_IIR_FCR:
		v = pending_iir(u);
		/* reading IIR acknowledges a THRE interrupt */
		if (v == IIR_THRI)
			u->thr_empty_pending = 0;
		return v | ((u->fcr & FCR_ENABLE) ? IIR_FIFO_ON : 0);
	case REG_LCR:
		return u->lcr;
	case REG_MCR:
		return u->mcr;
	case REG_LSR:
		return LSR_THRE | LSR_TEMT | (u->rx_len ? LSR_DR : 0);
	case REG_MSR:
		return modem_status(u);
	case REG_SCR:
		return u->scr;
	}
	return 0xff;
}

void uart_io(struct uart_8250 *u, unsigned int offset, int is_write, uint8_t *data)
{
	pthread_mutex_lock(&u->lock);
	if (is_write)
		reg_write(u, offset, *data);
	else
		*data = reg_read(u, offset);
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
}

unsigned int uart_receive(struct uart_8250 *u, const uint8_t *buf, unsigned int len)
{
	unsigned int n = 0;

	pthread_mutex_lock(&u->lock);
	while (n < len && u->rx_len < UART_RX_FIFO)
		u->rx[(u->rx_head + u->rx_len++) % UART_RX_FIFO] = buf[n++];
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return n;
}

void uart_flush(struct uart_8250 *u)
{
	pthread_mutex_lock(&u->lock);
	if (u->line_len)
		write_out(u);
	pthread_mutex_unlock(&u->lock);
}

/*
 * What the guest sees of the chip: its registers, the receive FIFO and the
 * interrupt it signals. Not the output line being gathered: that is the
 * console's, already out of the guest.
 */
#define UART_STATE_FIELDS(X) X(ier) X(lcr) X(mcr) X(scr) X(dll) X(dlm) X(fcr) \
	X(thr_empty_pending) X(rx) X(rx_head) X(rx_len) X(irq_level)

int uart_save(struct uart_8250 *u, struct device_stream *out)
{
#define PUT(f) device_stream_put(out, &u->f, sizeof(u->f));
	pthread_mutex_lock(&u->lock);
	UART_STATE_FIELDS(PUT)
	pthread_mutex_unlock(&u->lock);
#undef PUT
	return 0;
}

int uart_restore(struct uart_8250 *u, struct device_stream *in)
{
#define GET(f) device_stream_get(in, &u->f, sizeof(u->f));
	pthread_mutex_lock(&u->lock);
	UART_STATE_FIELDS(GET)
	if (u->rx_head >= UART_RX_FIFO || u->rx_len > UART_RX_FIFO)
		in->failed = 1;
	pthread_mutex_unlock(&u->lock);
#undef GET
	return in->failed ? -1 : 0;
}
