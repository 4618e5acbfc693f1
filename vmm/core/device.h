/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VM's devices behind one interface (kvmtool's ioport/mmio traps and
 * dev_init/dev_exit): a device registers its port and MMIO ranges with a
 * handler and its opaque state, and its hooks: reset (a guest reboot) and
 * save/restore (a byte stream: issue #21's migration needs every device's
 * state). A port or MMIO exit is dispatched by looking up the range; what
 * no device answers is answered as an absent device would be (reads all
 * ones, writes dropped), counted and reported once per port or page, never
 * fatal: a guest probing for hardware it does not find is normal.
 *
 * Which devices there are is the guest kind's business (boot/guest_boot.c):
 * core/ only keeps the table, and registers nothing itself. Registration
 * happens before the first vCPU runs; lookups take no lock.
 */
#ifndef HWLAB_DEVICE_H
#define HWLAB_DEVICE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct vcpu;
struct vm;

#define DEVICE_MAX		16
#define DEVICE_MAX_RANGES	32
#define DEVICE_MAX_REPORTED	32	/* distinct absent ports/pages reported */
#define DEVICE_BUSIEST		8	/* ports io_exits names */

enum device_space {
	DEVICE_PIO,
	DEVICE_MMIO,
};

/* An io handler's answer besides 0 (done) and -1 (the guest asked for a reset). */
#define DEVICE_ABSENT		1	/* nothing answers this access here */

/*
 * A device's saved state: bytes appended by save, taken in order by
 * restore. A put past cap, or a get past len, sets failed and moves no
 * bytes (so a hook can put or get all of its fields, then look once).
 */
struct device_stream {
	uint8_t *buf;
	size_t len, pos, cap;
	int failed;
};

void device_stream_put(struct device_stream *s, const void *p, size_t n);
void device_stream_get(struct device_stream *s, void *p, size_t n);

struct device {
	const char *name;		/* unique: save/restore records go by it */
	void *opaque;			/* the device's state, handed to every hook */
	/*
	 * An access of len bytes at addr (a port or a GPA), *data in or out:
	 * a whole access when it lies in one of the device's ranges, else
	 * (rep ins/outs, an access across a range's end, or after a whole one
	 * came back DEVICE_ABSENT) each byte alone. 0, DEVICE_ABSENT, or -1
	 * for a reset request.
	 */
	int (*io)(struct vcpu *v, void *opaque, uint64_t addr, int is_write, uint8_t *data,
		  unsigned int len);
	/* A guest reboot; NULL: nothing to put back. 0, or -1 after a message. */
	int (*reset)(struct vm *vm, void *opaque);
	/* NULL: the device's state is not saved (yet). 0, or -1 after a message. */
	int (*save)(void *opaque, struct device_stream *out);
	int (*restore)(void *opaque, struct device_stream *in);
};

/* What no device answered, and every port exit by its port. */
struct device_seen {
	unsigned int nr_ports, nr_mmio;
	uint16_t ports[DEVICE_MAX_REPORTED];
	uint64_t mmio_pages[DEVICE_MAX_REPORTED];
	unsigned long ignored;		/* accesses to absent devices, in all */
	/*
	 * Every port exit by its port (the access's first port), present
	 * device or not: each one is a trip out of KVM_RUN, and a guest that
	 * polls a port in a loop is a slow boot (vmm_exit's io_exits line).
	 */
	unsigned long port_exits;
	uint32_t exits_by_port[65536];
};

struct device_range {
	enum device_space space;
	uint64_t base, len;
	const struct device *dev;
};

struct device_bus {
	unsigned int nr_devices, nr_ranges;
	const struct device *devices[DEVICE_MAX];	/* in registration order */
	struct device_range ranges[DEVICE_MAX_RANGES];	/* by space, then base */
	pthread_mutex_t lock;		/* guards seen's lists */
	struct device_seen seen;
};

void device_bus_init(struct device_bus *bus);
/*
 * dev on the bus, in registration order, with no range yet (a chip inside
 * KVM has only hooks); again for the same dev: nothing. 0, or -1 after a
 * message (a full table).
 */
int device_add(struct device_bus *bus, const struct device *dev);
/*
 * Give dev the range [base, base + len) of space (device_add()ing it
 * first); a device with several ranges registers each. 0, or -1 after a message (an overlap with another
 * range, a full table, an empty range).
 */
int device_register(struct device_bus *bus, const struct device *dev, enum device_space space,
		    uint64_t base, uint64_t len);
/* The range holding addr, or NULL. */
const struct device_range *device_lookup(const struct device_bus *bus, enum device_space space,
					 uint64_t addr);
/* A KVM_EXIT_IO: 0 to run on, -1 when the guest asked for a reset. */
int device_port_exit(struct vcpu *v);
/* A KVM_EXIT_MMIO: the same. */
int device_mmio_exit(struct vcpu *v);
/* Every device's reset hook, in registration order; 0, or -1 at the first failure. */
int device_bus_reset(struct vm *vm);
/*
 * Every device with a save hook, in registration order, as records: its
 * name (NUL-terminated), a 32-bit length, then its bytes. Restore hands
 * each record to the device of that name; one it does not know, or a
 * device that does not take all of its record, fails. 0, or -1 after a message.
 */
int device_bus_save(const struct device_bus *bus, struct device_stream *out);
int device_bus_restore(const struct device_bus *bus, struct device_stream *in);
/*
 * The n (at most DEVICE_BUSIEST) ports with the most exits, most first
 * (ties: the lower port first), into ports[]; returns n. Pure.
 */
unsigned int device_busiest_ports(const struct device_seen *seen, uint16_t *ports, unsigned int n);
/* The "io_exits" report: all port exits, and the busiest ports' counts. */
void device_report_exits(const struct device_seen *seen);

#endif
