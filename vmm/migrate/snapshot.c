// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "migrate/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "boot/guest_boot.h"
#include "clock.h"
#include "core/device.h"
#include "core/kvm_ioctl.h"
#include "core/report.h"
#include "core/vm.h"
#include "hwlab_abi.h"
#include "log.h"
#include "mce/mce_delivery.h"
#include "migrate/stream.h"
#include "migrate/vcpu_state.h"

/* How long a pause may take to bring every vCPU out of KVM_RUN. */
#define PAUSE_TIMEOUT_NS	(5ULL * 1000 * 1000 * 1000)

/* POISON section entries: a GPA with these in its low bits. */
#define POISON_HEARD		1ULL	/* on the VMM's list: the kernel reported it */
#define POISON_TOLD		2ULL	/* the guest got a machine check for it */

/*
 * The machine a stream needs: a restore into another one is refused (the
 * guest's memory map, CPUs and MCE banks are what its kernel found at boot;
 * a reboot loads the same image again).
 */
struct snapshot_config {
	char kind[16];
	uint64_t mem_size;
	uint32_t nr_slots, backing, nr_vcpus, vendor;
	uint32_t mce_style, mce_banks, boot_count, zero;
	uint64_t image_size, image_hash, initrd_size, initrd_hash;
	struct {
		uint64_t gpa, size;
	} slots[MAX_MEMSLOTS];
};

/* FNV-1a, 64 bits: which image, not a defence (the stream's CRCs are for damage) */
static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

static void config_of(const struct vm *vm, struct snapshot_config *c)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	snprintf(c->kind, sizeof(c->kind), "%s", vm->kind->name);
	c->mem_size = vm->opt->mem_size;
	c->nr_slots = vm->mem.count;
	c->backing = vm->opt->backing;
	c->nr_vcpus = vm->opt->nr_vcpus;
	c->vendor = vm->vendor;
	c->mce_style = vm->mce_style;
	c->mce_banks = vm->mce_banks;
	c->boot_count = vm->boot_count;
	c->image_size = vm->guest->image.size;
	c->image_hash = fnv1a(vm->guest->image.data, vm->guest->image.size);
	if (vm->guest->initrd.data) {
		c->initrd_size = vm->guest->initrd.size;
		c->initrd_hash = fnv1a(vm->guest->initrd.data, vm->guest->initrd.size);
	}
	for (i = 0; i < vm->mem.count && i < MAX_MEMSLOTS; i++) {
		c->slots[i].gpa = vm->mem.slots[i].gpa;
		c->slots[i].size = vm->mem.slots[i].size;
	}
}

/* The first difference between the stream's machine and this one, or NULL. */
static const char *config_differs(const struct snapshot_config *want,
				  const struct snapshot_config *have)
{
	if (strncmp(want->kind, have->kind, sizeof(want->kind)))
		return "the guest's kind";
	if (want->image_size != have->image_size || want->image_hash != have->image_hash)
		return "the guest image (--kernel or the ELF)";
	if (want->initrd_size != have->initrd_size || want->initrd_hash != have->initrd_hash)
		return "the initrd";
	if (want->mem_size != have->mem_size || want->nr_slots != have->nr_slots ||
	    memcmp(want->slots, have->slots, sizeof(want->slots)))
		return "the guest's memory (--mem, --slots)";
	if (want->backing != have->backing)
		return "the memory's backing (--backing)";
	if (want->nr_vcpus != have->nr_vcpus)
		return "the vCPU count (--vcpus)";
	if (want->vendor != have->vendor)
		return "the vCPUs' vendor";
	if (want->mce_style != have->mce_style || want->mce_banks != have->mce_banks)
		return "the machine-check setup (--mce-vendor, --smca, --mce-banks)";
	return NULL;
}

/* The section buffer: a whole section, as stream_get() needs. */
static uint8_t *section_buf(void)
{
	uint8_t *b = malloc(STREAM_SECTION_MAX);

	if (!b)
		pr_err("out of memory for a %u-byte state section", STREAM_SECTION_MAX);
	return b;
}

/* The union of the VMM's list and the notified one, flagged, as u64s into *out. */
static int poison_section(struct vm *vm, struct device_stream *out, struct snapshot_stats *st)
{
	struct poison_list heard, told;
	unsigned int i = 0, j = 0;
	int r = -1;

	if (guest_poison_copy(&vm->poisoned, &heard))
		return -1;
	if (mce_delivery_notified_copy(vm, &told)) {
		poison_list_free(&heard);
		return -1;
	}
	while (i < heard.count || j < told.count) {
		uint64_t gpa, flags = 0;

		if (j == told.count || (i < heard.count && heard.gpas[i] <= told.gpas[j]))
			gpa = heard.gpas[i];
		else
			gpa = told.gpas[j];
		if (i < heard.count && heard.gpas[i] == gpa) {
			flags |= POISON_HEARD;
			i++;
		}
		if (j < told.count && told.gpas[j] == gpa) {
			flags |= POISON_TOLD;
			j++;
		}
		st->poisoned_heard += !!(flags & POISON_HEARD);
		st->poisoned_told += !!(flags & POISON_TOLD);
		gpa |= flags;
		device_stream_put(out, &gpa, sizeof(gpa));
	}
	if (!out->failed)
		r = 0;
	else
		pr_err("the poison section: more than %u pages", STREAM_SECTION_MAX / 8);
	poison_list_free(&heard);
	poison_list_free(&told);
	return r;
}

int snapshot_put_config(struct vm *vm, struct stream *s)
{
	struct snapshot_config cfg;

	config_of(vm, &cfg);
	return stream_put(s, STREAM_CONFIG, &cfg, sizeof(cfg));
}

int snapshot_put_machine(struct vm *vm, struct stream *s, struct snapshot_stats *st)
{
	struct device_stream out = { .cap = STREAM_SECTION_MAX };
	struct kvm_clock_data clock = { 0 };
	unsigned int i;
	int r = -1;

	out.buf = section_buf();
	if (!out.buf)
		return -1;
	if (kvm_ioctl(vm->vm_fd, KVM_GET_CLOCK, &clock) < 0 ||
	    stream_put(s, STREAM_VM, &clock, sizeof(clock)))
		goto done;
	if (device_bus_save(&vm->devices, &out) || stream_put(s, STREAM_DEVICES, out.buf, out.len))
		goto done;
	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		out.len = 0;
		device_stream_put(&out, &i, sizeof(i));
		if (vcpu_state_save(&vm->vcpus[i], &out) ||
		    stream_put(s, STREAM_VCPU, out.buf, out.len))
			goto done;
	}
	out.len = 0;
	if (poison_section(vm, &out, st) || stream_put(s, STREAM_POISON, out.buf, out.len))
		goto done;
	r = 0;
done:
	free(out.buf);
	return r;
}

int snapshot_save_state(struct vm *vm, struct stream *s, struct snapshot_stats *st)
{
	struct poison_list known;
	struct ram_writer w;
	int r;

	if (snapshot_put_config(vm, s) || snapshot_put_machine(vm, s, st))
		return -1;
	if (guest_poison_copy(&vm->poisoned, &known))
		return -1;
	if (ram_writer_init(&w, s, &known)) {
		poison_list_free(&known);
		return -1;
	}
	r = ram_send_all(&w, vm);
	st->ram = w.c;
	ram_writer_free(&w);
	poison_list_free(&known);
	return r;
}

static int restore_poison(struct vm *vm, const uint8_t *p, uint32_t len, struct restore_result *r)
{
	uint32_t at;

	if (len % 8) {
		pr_err("the poison section has %u bytes, not whole entries", len);
		return -1;
	}
	for (at = 0; at < len; at += 8) {
		uint64_t e, gpa;

		memcpy(&e, p + at, sizeof(e));
		gpa = e & ~0xfffULL;
		if (!memslot_gpa_to_hva(&vm->mem, gpa, GUEST_PAGE_SIZE) || (e & 0xffc) ||
		    !(e & (POISON_HEARD | POISON_TOLD))) {
			pr_err("the poison section names GPA %#llx (flags %#llx): not a page of "
			       "this VM's RAM", (unsigned long long)gpa,
			       (unsigned long long)(e & 0xfff));
			return -1;
		}
		if (e & POISON_TOLD) {
			if (guest_poison_add(&vm->poisoned, gpa, GUEST_PAGE_SIZE) < 0 ||
			    mce_delivery_mark_told(vm, gpa, GUEST_PAGE_SIZE) ||
			    poison_list_add(&r->told, gpa, GUEST_PAGE_SIZE) < 0)
				return -1;
			r->poisoned_told++;
		} else if (poison_list_add(&r->to_tell, gpa, GUEST_PAGE_SIZE) < 0) {
			return -1;
		}
	}
	return 0;
}

int snapshot_restore_state(struct vm *vm, struct stream *s, struct restore_result *r)
{
	struct snapshot_config have, want;
	struct ram_reader rr = { 0 };
	enum stream_section type;
	unsigned int vcpus = 0, i;
	int seen_config = 0, seen_poison = 0, seen_vm = 0, seen_devices = 0, seen_ram = 0;
	int ret = -1;
	uint8_t *buf = section_buf();
	const char *diff;
	uint32_t len;

	memset(r, 0, sizeof(*r));
	if (!buf)
		return -1;
	config_of(vm, &have);
	for (;;) {
		if (stream_get(s, &type, buf, &len))
			goto done;
		if (type == STREAM_END)
			break;
		if (!seen_config && type != STREAM_CONFIG) {
			pr_err("%s: the stream does not start with its config section", s->name);
			goto done;
		}
		switch (type) {
		case STREAM_CONFIG:
			if (seen_config || len != sizeof(want)) {
				pr_err("%s: a config section of %u bytes (this hwlab-vmm writes %zu)",
				       s->name, len, sizeof(want));
				goto done;
			}
			memcpy(&want, buf, sizeof(want));
			diff = config_differs(&want, &have);
			if (diff) {
				pr_err("%s was saved from another machine: %s differs; start "
				       "hwlab-vmm with the options it was saved with", s->name, diff);
				goto done;
			}
			vm->boot_count = want.boot_count;
			seen_config = 1;
			break;
		case STREAM_VM: {
			struct kvm_clock_data clock;

			if (len != sizeof(clock)) {
				pr_err("%s: a vm section of %u bytes", s->name, len);
				goto done;
			}
			memcpy(&clock, buf, sizeof(clock));
			/* the guest's clock goes on from where it stopped */
			clock.flags = 0;
			if (kvm_ioctl(vm->vm_fd, KVM_SET_CLOCK, &clock) < 0)
				goto done;
			seen_vm = 1;
			break;
		}
		case STREAM_DEVICES: {
			struct device_stream in = { .buf = buf, .len = len, .cap = len };

			if (device_bus_restore(&vm->devices, &in))
				goto done;
			seen_devices = 1;
			break;
		}
		case STREAM_VCPU: {
			struct device_stream in = { .buf = buf, .len = len, .cap = len };

			device_stream_get(&in, &i, sizeof(i));
			if (in.failed || i != vcpus || i >= vm->opt->nr_vcpus) {
				pr_err("%s: a vcpu section out of order (vCPU %u after %u)", s->name,
				       i, vcpus);
				goto done;
			}
			if (vcpu_state_restore(&vm->vcpus[i], &in))
				goto done;
			if (in.pos != in.len) {
				pr_err("%s: vCPU %u's section has %zu bytes left over", s->name, i,
				       in.len - in.pos);
				goto done;
			}
			vcpus++;
			break;
		}
		case STREAM_POISON:
			if (restore_poison(vm, buf, len, r))
				goto done;
			seen_poison = 1;
			break;
		case STREAM_RAM:
			if (ram_apply_section(&rr, vm, buf, len))
				goto done;
			seen_ram = 1;
			break;
		default:
			pr_err("%s: section %u has an unknown type %u", s->name, s->sections, type);
			goto done;
		}
	}
	if (vcpus != vm->opt->nr_vcpus || !seen_poison || !seen_vm || !seen_devices || !seen_ram) {
		pr_err("%s: the stream lacks part of the guest: %u of %u vCPUs, %s poison, vm, "
		       "devices and RAM sections", s->name, vcpus, vm->opt->nr_vcpus,
		       seen_poison && seen_vm && seen_devices && seen_ram ? "all of the" :
									  "not all of the");
		goto done;
	}
	if (poison_keep(vm, &rr.poisoned, &r->keep))
		goto done;
	/* a page left without a marker reads zeros: the guest must hear of it, unless it did */
	for (i = 0; i < r->keep.unmarked.count; i++)
		if (!poison_list_contains(&r->told, r->keep.unmarked.gpas[i]) &&
		    poison_list_add(&r->to_tell, r->keep.unmarked.gpas[i], GUEST_PAGE_SIZE) < 0)
			goto done;
	/* the rest that came poisoned or unreadable is on this VM's list (a reset remaps it) */
	for (i = 0; i < rr.poisoned.count; i++)
		if (!poison_list_contains(&r->to_tell, rr.poisoned.gpas[i]) &&
		    guest_poison_add(&vm->poisoned, rr.poisoned.gpas[i], GUEST_PAGE_SIZE) < 0)
			goto done;
	ret = 0;
done:
	r->ram = rr.c;
	r->bytes = s->wire_bytes;
	r->sections = s->sections;
	poison_list_free(&rr.poisoned);
	poison_list_free(&r->told);
	poison_list_free(&r->keep.unmarked);
	free(buf);
	return ret;
}

void snapshot_tell_owed(struct vm *vm, struct restore_result *r)
{
	unsigned int i;

	for (i = 0; i < r->to_tell.count; i++)
		mce_delivery_owed_ao(vm, r->to_tell.gpas[i]);
	poison_list_free(&r->to_tell);
}

void snapshot_report_restore(const char *event, const char *from, const struct restore_result *r,
			     uint64_t ns)
{
	report(event, "\"status\":\"ok\",\"from\":\"%s\",\"bytes\":%llu,\"sections\":%u,"
	       "\"pages_data\":%llu,\"pages_zero\":%llu,\"pages_poisoned\":%llu,"
	       "\"pages_unreadable\":%llu,\"poisoned_told\":%u,\"owed_aos\":%u,"
	       "\"poison_kept\":\"%s\",\"poison_kept_why\":\"%s\",\"marked_units\":%u,"
	       "\"marked_pages\":%u,\"partial_huge\":%u,\"restore_ms\":%.1f",
	       from, (unsigned long long)r->bytes, r->sections,
	       (unsigned long long)r->ram.pages[RAM_PAGE_DATA],
	       (unsigned long long)r->ram.pages[RAM_PAGE_ZERO],
	       (unsigned long long)r->ram.pages[RAM_PAGE_POISONED],
	       (unsigned long long)r->ram.pages[RAM_PAGE_UNREADABLE], r->poisoned_told,
	       r->to_tell.count, r->keep.how, r->keep.why, r->keep.units, r->keep.pages,
	       r->keep.partial_huge, ns / 1e6);
}

void snapshot_report_refused(const char *event, const char *from)
{
	report(event, "\"status\":\"refused\",\"from\":\"%s\",\"reason\":\"see the VMM's error "
	       "message; the guest was not started\"", from);
}
