// SPDX-License-Identifier: GPL-2.0
#include "core/device.h"

#include <stdio.h>
#include <string.h>

#include "core/report.h"
#include "core/vm.h"
#include "escape.h"
#include "log.h"

void device_stream_put(struct device_stream *s, const void *p, size_t n)
{
	if (s->failed || n > s->cap - s->len) {
		s->failed = 1;
		return;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

void device_stream_get(struct device_stream *s, void *p, size_t n)
{
	if (s->failed || n > s->len - s->pos) {
		s->failed = 1;
		return;
	}
	memcpy(p, s->buf + s->pos, n);
	s->pos += n;
}

void device_bus_init(struct device_bus *bus)
{
	pthread_mutex_init(&bus->lock, NULL);
}

/* a before b: by space, then base */
static int range_before(const struct device_range *a, enum device_space space, uint64_t base)
{
	return a->space < space || (a->space == space && a->base < base);
}

int device_add(struct device_bus *bus, const struct device *dev)
{
	unsigned int i;

	for (i = 0; i < bus->nr_devices; i++)
		if (bus->devices[i] == dev)
			return 0;
	if (bus->nr_devices == DEVICE_MAX) {
		pr_err("device %s: the device table is full", dev->name);
		return -1;
	}
	bus->devices[bus->nr_devices++] = dev;
	return 0;
}

int device_register(struct device_bus *bus, const struct device *dev, enum device_space space,
		    uint64_t base, uint64_t len)
{
	const char *sp = space == DEVICE_PIO ? "port" : "MMIO";
	unsigned int i, at;

	if (!len || base + len < base) {
		pr_err("device %s: empty or wrapping %s range %#llx+%#llx", dev->name, sp,
		       (unsigned long long)base, (unsigned long long)len);
		return -1;
	}
	for (i = 0; i < bus->nr_ranges; i++) {
		const struct device_range *r = &bus->ranges[i];

		if (r->space == space && base < r->base + r->len && r->base < base + len) {
			pr_err("device %s: %s range %#llx+%#llx overlaps %s's at %#llx+%#llx",
			       dev->name, sp, (unsigned long long)base, (unsigned long long)len,
			       r->dev->name, (unsigned long long)r->base, (unsigned long long)r->len);
			return -1;
		}
	}
	if (bus->nr_ranges == DEVICE_MAX_RANGES) {
		pr_err("device %s: the range table is full", dev->name);
		return -1;
	}
	if (device_add(bus, dev))
		return -1;
	for (at = 0; at < bus->nr_ranges && range_before(&bus->ranges[at], space, base); at++)
		;
	memmove(&bus->ranges[at + 1], &bus->ranges[at],
		(bus->nr_ranges - at) * sizeof(bus->ranges[0]));
	bus->ranges[at] = (struct device_range) { space, base, len, dev };
	bus->nr_ranges++;
	return 0;
}

const struct device_range *device_lookup(const struct device_bus *bus, enum device_space space,
					 uint64_t addr)
{
	unsigned int lo = 0, hi = bus->nr_ranges;

	/* the first range not before (space, addr + 1), then the one before it */
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (range_before(&bus->ranges[mid], space, addr + 1))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct device_range *r = &bus->ranges[lo - 1];

		if (r->space == space && addr - r->base < r->len)
			return r;
	}
	return NULL;
}

/* Report the first access to each absent port or page; count all. */
static void absent(struct vcpu *v, int is_mmio, uint64_t addr, int is_write, unsigned int size)
{
	struct device_bus *bus = &v->vm->devices;
	struct device_seen *seen = &bus->seen;
	unsigned int i, n;

	__atomic_fetch_add(&seen->ignored, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&bus->lock);
	n = is_mmio ? seen->nr_mmio : seen->nr_ports;
	for (i = 0; i < n; i++)
		if (is_mmio ? seen->mmio_pages[i] == (addr & ~0xfffULL) : seen->ports[i] == addr)
			break;
	if (i < n || n == DEVICE_MAX_REPORTED) {
		pthread_mutex_unlock(&bus->lock);
		return;
	}
	if (is_mmio)
		seen->mmio_pages[seen->nr_mmio++] = addr & ~0xfffULL;
	else
		seen->ports[seen->nr_ports++] = addr;
	pthread_mutex_unlock(&bus->lock);
	report("io_ignored", "\"vcpu\":%u,\"%s\":\"%#llx\",\"direction\":\"%s\",\"size\":%u,"
	       "\"reason\":\"no device there: reads all ones, writes dropped\"", v->id,
	       is_mmio ? "gpa" : "port", (unsigned long long)addr, is_write ? "out" : "in", size);
}

/*
 * One access of size bytes at addr: whole, if one range holds it and whole
 * is allowed, else byte by byte, each byte to its own device or absent
 * (reported with the access's size). -1 for a reset request.
 */
static int dispatch(struct vcpu *v, enum device_space space, uint64_t addr, int is_write,
		    uint8_t *data, unsigned int size, int whole)
{
	const struct device_bus *bus = &v->vm->devices;
	const struct device_range *r = device_lookup(bus, space, addr);
	unsigned int j;
	int ret;

	if (whole && r && addr + size - r->base <= r->len) {
		ret = r->dev->io(v, r->dev->opaque, addr, is_write, data, size);
		if (ret != DEVICE_ABSENT)
			return ret < 0 ? -1 : 0;
	}
	for (j = 0; j < size; j++) {
		r = device_lookup(bus, space, addr + j);
		ret = r ? r->dev->io(v, r->dev->opaque, addr + j, is_write, &data[j], 1) :
			  DEVICE_ABSENT;
		if (ret < 0)
			return -1;
		if (ret == DEVICE_ABSENT) {
			if (!is_write)
				data[j] = 0xff;
			absent(v, space == DEVICE_MMIO, addr + j, is_write, size);
		}
	}
	return 0;
}

int device_port_exit(struct vcpu *v)
{
	struct device_seen *seen = &v->vm->devices.seen;
	struct kvm_run *run = v->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	int is_write = run->io.direction == KVM_EXIT_IO_OUT;
	unsigned int i;

	__atomic_fetch_add(&seen->port_exits, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&seen->exits_by_port[run->io.port], 1, __ATOMIC_RELAXED);
	/* "rep ins/outs": count accesses, each a byte at a time */
	for (i = 0; i < run->io.count; i++)
		if (dispatch(v, DEVICE_PIO, run->io.port, is_write, &data[i * run->io.size],
			     run->io.size, run->io.count == 1))
			return -1;
	return 0;
}

int device_mmio_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	unsigned int len = run->mmio.len > 8 ? 8 : run->mmio.len;
	const struct device_range *r = device_lookup(&v->vm->devices, DEVICE_MMIO,
						     run->mmio.phys_addr);
	int ret = DEVICE_ABSENT;

	/* an MMIO access is one access (no byte-wise fallback: one page, one report) */
	if (r && run->mmio.phys_addr + len - r->base <= r->len)
		ret = r->dev->io(v, r->dev->opaque, run->mmio.phys_addr, run->mmio.is_write,
				 run->mmio.data, len);
	if (ret != DEVICE_ABSENT)
		return ret < 0 ? -1 : 0;
	if (!run->mmio.is_write)
		memset(run->mmio.data, 0xff, len);
	absent(v, 1, run->mmio.phys_addr, run->mmio.is_write, len);
	return 0;
}

int device_bus_reset(struct vm *vm)
{
	const struct device_bus *bus = &vm->devices;
	unsigned int i;

	for (i = 0; i < bus->nr_devices; i++)
		if (bus->devices[i]->reset && bus->devices[i]->reset(vm, bus->devices[i]->opaque))
			return -1;
	return 0;
}

int device_bus_save(const struct device_bus *bus, struct device_stream *out)
{
	unsigned int i;

	for (i = 0; i < bus->nr_devices; i++) {
		const struct device *d = bus->devices[i];
		size_t at;
		uint32_t n;

		if (!d->save)
			continue;
		device_stream_put(out, d->name, strlen(d->name) + 1);
		at = out->len;
		device_stream_put(out, &(uint32_t){ 0 }, sizeof(n));
		if (out->failed || d->save(d->opaque, out) || out->failed) {
			pr_err("saving device %s: %s", d->name,
			       out->failed ? "no room in the stream" : "its hook failed");
			return -1;
		}
		n = out->len - at - sizeof(n);
		memcpy(out->buf + at, &n, sizeof(n));
	}
	return 0;
}

int device_bus_restore(const struct device_bus *bus, struct device_stream *in)
{
	while (in->pos < in->len) {
		const char *name = (const char *)in->buf + in->pos;
		size_t name_len = strnlen(name, in->len - in->pos);
		const struct device *d = NULL;
		/* the stream's name, for messages: escaped, and cut past 64 bytes */
		char shown[ESCAPED_SIZE(64)];
		struct device_stream rec;
		unsigned int i;
		uint32_t n;

		if (name_len == in->len - in->pos) {
			pr_err("device state: a record without a name's end");
			return -1;
		}
		escape_bytes(shown, sizeof(shown), name, name_len);
		in->pos += name_len + 1;
		device_stream_get(in, &n, sizeof(n));
		if (in->failed || n > in->len - in->pos) {
			pr_err("device state: %s's record is cut short", shown);
			return -1;
		}
		for (i = 0; i < bus->nr_devices; i++)
			if (bus->devices[i]->restore && !strcmp(bus->devices[i]->name, name))
				d = bus->devices[i];
		rec = (struct device_stream) { .buf = in->buf + in->pos, .len = n, .cap = n };
		in->pos += n;
		if (!d) {
			pr_err("device state: no device '%s' here to restore", shown);
			return -1;
		}
		if (d->restore(d->opaque, &rec) || rec.failed || rec.pos != rec.len) {
			pr_err("restoring device %s: %s", shown,
			       rec.failed || rec.pos != rec.len ? "its record does not fit" :
								  "its hook failed");
			return -1;
		}
	}
	return 0;
}

unsigned int device_busiest_ports(const struct device_seen *seen, uint16_t *ports, unsigned int n)
{
	unsigned int found = 0, i, p;

	if (n > DEVICE_BUSIEST)
		n = DEVICE_BUSIEST;
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

void device_report_exits(const struct device_seen *seen)
{
	uint16_t ports[DEVICE_BUSIEST];
	unsigned int n = device_busiest_ports(seen, ports, DEVICE_BUSIEST), i;
	char busiest[DEVICE_BUSIEST * 24] = "", *b = busiest;

	for (i = 0; i < n; i++)
		b += sprintf(b, "%s\"%#x\":%u", i ? "," : "", ports[i],
			     seen->exits_by_port[ports[i]]);
	report("io_exits", "\"port_exits\":%lu,\"busiest\":{%s}", seen->port_exits, busiest);
}
