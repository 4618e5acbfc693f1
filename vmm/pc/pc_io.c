// SPDX-License-Identifier: GPL-2.0
#include "pc/pc_io.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/report.h"
#include "pc/uart_8250.h"
#include "core/vm.h"

#define PORT_PCI_CONF1_ADDR	0xcf8	/* conf1's address register, 32 bits */
#define PORT_PCI_CONF1_DATA	0xcfc	/* its data window, 0xcfc..0xcff */
#define PCI_CONF1_ENABLE	0x80000000u
#define PORT_POST		0x80	/* POST codes; Linux's io_delay() */
#define PORT_KBD_DATA		0x60
#define PORT_KBD_STATUS		0x64
#define KBD_CMD_PULSE_RESET	0xfe
#define KBD_STATUS_OBF		0x01	/* output buffer full */
#define PORT_CMOS_INDEX		0x70
#define PORT_CMOS_DATA		0x71
#define CMOS_REG_A		0x0a
#define CMOS_REG_B		0x0b
#define CMOS_REG_D		0x0d
#define CMOS_A_DIVIDER		0x26	/* 32.768 kHz, 1024 Hz; UIP clear */
#define CMOS_B_24H		0x02	/* BCD, 24-hour */
#define CMOS_D_VALID		0x80	/* battery good */

static uint8_t bcd(unsigned int v)
{
	return ((v / 10) << 4) | (v % 10);
}

/* The RTC's time registers read the host's UTC; the rest reads 0. */
static uint8_t cmos_read(uint8_t index)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	switch (index & 0x7f) {
	case 0x00: return bcd(tm.tm_sec);
	case 0x02: return bcd(tm.tm_min);
	case 0x04: return bcd(tm.tm_hour);
	case 0x06: return bcd(tm.tm_wday + 1);
	case 0x07: return bcd(tm.tm_mday);
	case 0x08: return bcd(tm.tm_mon + 1);
	case 0x09: return bcd(tm.tm_year % 100);
	case 0x32: return bcd(tm.tm_year / 100 + 19);	/* century */
	case CMOS_REG_A: return CMOS_A_DIVIDER;
	case CMOS_REG_B: return CMOS_B_24H;
	case CMOS_REG_D: return CMOS_D_VALID;
	}
	return 0;
}

/*
 * 00:00.0's configuration space (pc_io.h says why it is there): a host
 * bridge (class 06/00, one function, no BARs) whose capability list
 * (status bit 4, pointer at 0x34) is one AGP capability (ID 2, AGP 3.0,
 * no next) at 0x40 with status, command and APSIZE (cap + 0x14) all 0: an
 * aperture at bus address 0, which Linux's read_agp() finds invalid and
 * ignores. Little-endian, as the guest reads it; the rest reads 0.
 */
#define HOST_BRIDGE_AGP_CAP	0x40
static const uint8_t host_bridge[0x58] = {
	[0x00] = 0x36, [0x01] = 0x1b,	/* vendor 0x1b36 (Red Hat: QEMU's devices) */
	[0x02] = 0x08, [0x03] = 0x00,	/* device 0x0008, "QEMU PCIe host bridge" */
	[0x06] = 0x10,			/* status: a capability list */
	[0x0b] = 0x06,			/* class 06 (bridge), subclass 00 (host) */
	[0x34] = HOST_BRIDGE_AGP_CAP,
	[HOST_BRIDGE_AGP_CAP] = 0x02,	/* PCI_CAP_ID_AGP, next 0 */
	[HOST_BRIDGE_AGP_CAP + 2] = 0x30,	/* AGP 3.0 */
};

int pc_io_conf1_byte(uint32_t addr, unsigned int offset, uint8_t *b)
{
	unsigned int bus = (addr >> 16) & 0xff, devfn = (addr >> 8) & 0xff;
	unsigned int reg = (addr & 0xfc) + (offset & 3);

	if (!(addr & PCI_CONF1_ENABLE) || bus || devfn)
		return 0;
	*b = reg < sizeof(host_bridge) ? host_bridge[reg] : 0;
	return 1;
}

/* Report the first access to each absent port or page; count all. */
static void absent(struct vcpu *v, int is_mmio, uint64_t addr, int is_write, unsigned int size)
{
	struct pc_io_seen *seen = &v->vm->io_seen;
	unsigned int i, n;

	__atomic_fetch_add(&seen->ignored, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&v->vm->io_lock);
	n = is_mmio ? seen->nr_mmio : seen->nr_ports;
	for (i = 0; i < n; i++)
		if (is_mmio ? seen->mmio_pages[i] == (addr & ~0xfffULL) : seen->ports[i] == addr)
			break;
	if (i < n || n == PC_IO_MAX_REPORTED) {
		pthread_mutex_unlock(&v->vm->io_lock);
		return;
	}
	if (is_mmio)
		seen->mmio_pages[seen->nr_mmio++] = addr & ~0xfffULL;
	else
		seen->ports[seen->nr_ports++] = addr;
	pthread_mutex_unlock(&v->vm->io_lock);
	report("io_ignored", "\"vcpu\":%u,\"%s\":\"%#llx\",\"direction\":\"%s\",\"size\":%u,"
	       "\"reason\":\"no device there: reads all ones, writes dropped\"", v->id,
	       is_mmio ? "gpa" : "port", (unsigned long long)addr, is_write ? "out" : "in", size);
}

/* One byte of a port access; returns -1 for a reset request. */
static int port_byte(struct vcpu *v, uint16_t port, int is_write, uint8_t *b, unsigned int size)
{
	struct vm *vm = v->vm;

	if (port >= UART_COM1_BASE && port < UART_COM1_BASE + UART_NR_REGS) {
		uart_io(&vm->uart, port - UART_COM1_BASE, is_write, b);
		return 0;
	}
	switch (port) {
	case PORT_POST:
		return 0;
	case PORT_CMOS_INDEX:
		if (is_write)
			vm->cmos_index = *b;
		else
			*b = vm->cmos_index;
		return 0;
	case PORT_CMOS_DATA:
		if (!is_write)
			*b = cmos_read(vm->cmos_index);
		return 0;
	case PORT_KBD_STATUS:
		if (is_write && *b == KBD_CMD_PULSE_RESET) {
			report("guest_reset", "\"vcpu\":%u,\"reason\":\"keyboard controller reset "
			       "(%#x to port %#x)\"", v->id, KBD_CMD_PULSE_RESET, PORT_KBD_STATUS);
			return -1;
		}
		/*
		 * No controller but its reset line. The status reads "output
		 * buffer full, input buffer empty": Linux's i8042 driver then
		 * flushes 16 bytes and says "No controller found" (about 33
		 * exits), where a status of 0 made it wait 10,000 polls of
		 * 50 us for a command byte that never came ("Can't read CTR"),
		 * and the reboot path's kb_wait() still sees the input buffer
		 * empty at once (all ones, as on a board without one, would
		 * make it poll 65,536 times first).
		 */
		if (!is_write)
			*b = KBD_STATUS_OBF;
		return 0;
	case PORT_KBD_DATA:
		if (!is_write)
			*b = 0;
		return 0;
	case PORT_PCI_CONF1_DATA ... PORT_PCI_CONF1_DATA + 3:
		if (!is_write && pc_io_conf1_byte(vm->pci_conf1_addr, port - PORT_PCI_CONF1_DATA, b))
			return 0;
		break;	/* no other function: all ones, as for no device */
	}
	if (!is_write)
		*b = 0xff;
	absent(v, 0, port, is_write, size);
	return 0;
}

int pc_io_port(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	int is_write = run->io.direction == KVM_EXIT_IO_OUT;
	unsigned int i, j;

	__atomic_fetch_add(&v->vm->io_seen.port_exits, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&v->vm->io_seen.exits_by_port[run->io.port], 1, __ATOMIC_RELAXED);
	/*
	 * conf1's address latch: a 32-bit write to 0xcf8 only (narrower ones
	 * are other devices' ports on a PC: pci_check_type2() writes bytes
	 * there). Its reads stay absent, all ones: pc_io.h says why.
	 */
	if (run->io.port == PORT_PCI_CONF1_ADDR && run->io.size == 4 && run->io.count == 1 &&
	    is_write) {
		memcpy(&v->vm->pci_conf1_addr, data, 4);
		return 0;
	}
	/* a wider access is as many byte accesses; "rep ins/outs": count of them */
	for (i = 0; i < run->io.count; i++)
		for (j = 0; j < run->io.size; j++)
			if (port_byte(v, run->io.port + j, is_write,
				      &data[i * run->io.size + j], run->io.size))
				return -1;
	return 0;
}

void pc_io_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	unsigned int len = run->mmio.len > 8 ? 8 : run->mmio.len;

	if (!run->mmio.is_write)
		memset(run->mmio.data, 0xff, len);
	absent(v, 1, run->mmio.phys_addr, run->mmio.is_write, len);
}

unsigned int pc_io_busiest(const struct pc_io_seen *seen, uint16_t *ports, unsigned int n)
{
	unsigned int found = 0, i, p;

	if (n > PC_IO_BUSIEST)
		n = PC_IO_BUSIEST;
	/* insertion into a short sorted list: 65536 counts, n at most 8 */
	for (p = 0; p < 65536; p++) {
		uint32_t c = seen->exits_by_port[p];

		if (!c || (found == n && c <= seen->exits_by_port[ports[n - 1]]))
			continue;
		i = found < n ? found++ : n - 1;
		while (i > 0 && seen->exits_by_port[ports[i - 1]] < c) {
			ports[i] = ports[i - 1];
			i--;
		}
		ports[i] = p;
	}
	return found;
}

void pc_io_report_exits(const struct pc_io_seen *seen)
{
	uint16_t ports[PC_IO_BUSIEST];
	unsigned int n = pc_io_busiest(seen, ports, PC_IO_BUSIEST), i;
	char busiest[PC_IO_BUSIEST * 24] = "", *b = busiest;

	for (i = 0; i < n; i++)
		b += sprintf(b, "%s\"%#x\":%u", i ? "," : "", ports[i],
			     seen->exits_by_port[ports[i]]);
	report("io_exits", "\"port_exits\":%lu,\"busiest\":{%s}", seen->port_exits, busiest);
}
