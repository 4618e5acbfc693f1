// SPDX-License-Identifier: GPL-2.0
/* The port-exit counts of a Linux guest: which ports vmm_exit's io_exits names. */
#include "pc_io.h"
#include "unit.h"

void test_pc_io_busiest(void)
{
	static struct pc_io_seen seen;
	uint16_t ports[PC_IO_BUSIEST];

	CHECK_EQ(pc_io_busiest(&seen, ports, PC_IO_BUSIEST), 0);
	seen.exits_by_port[0x64] = 10000;
	seen.exits_by_port[0xcf8] = 7;
	seen.exits_by_port[0x3f8] = 500;
	seen.exits_by_port[0x3fd] = 500;
	seen.exits_by_port[0xffff] = 1;
	CHECK_EQ(pc_io_busiest(&seen, ports, PC_IO_BUSIEST), 5);
	CHECK_EQ(ports[0], 0x64);
	CHECK_EQ(ports[1], 0x3f8);	/* ties: the lower port first */
	CHECK_EQ(ports[2], 0x3fd);
	CHECK_EQ(ports[3], 0xcf8);
	CHECK_EQ(ports[4], 0xffff);
	CHECK_EQ(pc_io_busiest(&seen, ports, 2), 2);
	CHECK_EQ(ports[0], 0x64);
	CHECK_EQ(ports[1], 0x3f8);
}
