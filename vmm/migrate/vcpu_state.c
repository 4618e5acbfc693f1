// SPDX-License-Identifier: GPL-2.0
#include "migrate/vcpu_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "core/device.h"
#include "core/kvm_ioctl.h"
#include "core/vm.h"
#include "log.h"
#include "mce/smca.h"
#include "mce/smca_kvm.h"
#include "x86_mce.h"

#define TAG(a, b, c, d)	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define TAG_REGS	TAG('R', 'E', 'G', 'S')
#define TAG_SREGS	TAG('S', 'R', 'E', 'G')
#define TAG_XSAVE	TAG('X', 'S', 'A', 'V')
#define TAG_FPU		TAG('F', 'P', 'U', ' ')
#define TAG_XCRS	TAG('X', 'C', 'R', 'S')
#define TAG_MSRS	TAG('M', 'S', 'R', 'S')
#define TAG_MP		TAG('M', 'P', 'S', 'T')
#define TAG_LAPIC	TAG('L', 'A', 'P', 'C')
#define TAG_EVENTS	TAG('E', 'V', 'N', 'T')
#define TAG_DEBUG	TAG('D', 'B', 'G', 'R')
#define TAG_SMCA	TAG('S', 'M', 'C', 'A')

/* KVM's MSR list plus the MCE banks': far below this */
#define MSRS_MAX	1024
#define MSR_IA32_TSC_DEADLINE	0x6e0

static void put_piece(struct device_stream *out, uint32_t tag, const void *p, uint32_t len)
{
	device_stream_put(out, &tag, sizeof(tag));
	device_stream_put(out, &len, sizeof(len));
	if (len)
		device_stream_put(out, p, len);
}

/*
 * The next piece, which must be tag: its bytes at *p (in the stream, not
 * copied) and its length. 0, or -1 after a message.
 */
static int next_piece(struct device_stream *in, const struct vcpu *v, uint32_t tag,
		      const void **p, uint32_t *len)
{
	uint32_t t = 0;

	device_stream_get(in, &t, sizeof(t));
	device_stream_get(in, len, sizeof(*len));
	if (in->failed || t != tag || *len > in->len - in->pos) {
		pr_err("vCPU %u's state: the piece %.4s is %s", v->id, (const char *)&tag,
		       in->failed || *len > in->len - in->pos ? "cut short" : "not where it belongs");
		in->failed = 1;
		return -1;
	}
	*p = in->buf + in->pos;
	in->pos += *len;
	return 0;
}

/* A piece of exactly len bytes into dst. */
static int get_piece(struct device_stream *in, const struct vcpu *v, uint32_t tag, void *dst,
		     uint32_t len)
{
	const void *p;
	uint32_t n;

	if (next_piece(in, v, tag, &p, &n))
		return -1;
	if (n != len) {
		pr_err("vCPU %u's state: the piece %.4s has %u bytes, not %u", v->id,
		       (const char *)&tag, n, len);
		return -1;
	}
	memcpy(dst, p, len);
	return 0;
}

/* The XSAVE area's size: KVM_CAP_XSAVE2's (AMX and beyond), else struct kvm_xsave's. */
static size_t xsave_size(const struct vcpu *v)
{
	int n = ioctl(v->vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);

	return n > (int)sizeof(struct kvm_xsave) ? (size_t)n : sizeof(struct kvm_xsave);
}

static int has_cap(const struct vcpu *v, long cap)
{
	return ioctl(v->vm->kvm_fd, KVM_CHECK_EXTENSION, cap) > 0;
}

/*
 * The MSRs to carry: KVM's list (KVM_GET_MSR_INDEX_LIST: what it saves and
 * emulates), and the MCE banks' and MCG_STATUS, which it does not list.
 */
static struct kvm_msrs *msrs_to_carry(const struct vcpu *v)
{
	struct kvm_msr_list probe = { .nmsrs = 0 }, *list;
	struct kvm_msrs *m;
	unsigned int i, bank;

	if (ioctl(v->vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG) {
		pr_errno("KVM_GET_MSR_INDEX_LIST");
		return NULL;
	}
	if (probe.nmsrs + 1 + 4 * v->vm->mce_banks > MSRS_MAX) {
		pr_err("KVM lists %u MSRs, more than hwlab-vmm carries", probe.nmsrs);
		return NULL;
	}
	list = calloc(1, sizeof(*list) + probe.nmsrs * sizeof(list->indices[0]));
	m = calloc(1, sizeof(*m) + MSRS_MAX * sizeof(m->entries[0]));
	if (!list || !m)
		goto fail;
	list->nmsrs = probe.nmsrs;
	if (kvm_ioctl(v->vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, list) < 0)
		goto fail;
	for (i = 0; i < list->nmsrs; i++)
		m->entries[m->nmsrs++].index = list->indices[i];
	m->entries[m->nmsrs++].index = MSR_IA32_MCG_STATUS;
	for (bank = 0; bank < v->vm->mce_banks; bank++) {
		m->entries[m->nmsrs++].index = MSR_IA32_MCx_CTL(bank);
		m->entries[m->nmsrs++].index = MSR_IA32_MCx_STATUS(bank);
		m->entries[m->nmsrs++].index = MSR_IA32_MCx_ADDR(bank);
		m->entries[m->nmsrs++].index = MSR_IA32_MCx_MISC(bank);
	}
	free(list);
	return m;
fail:
	free(list);
	free(m);
	return NULL;
}

/*
 * KVM_GET_MSRS stops at the first MSR it refuses (one this vCPU's CPUID
 * does not have): that one is dropped, the rest read on. m keeps those
 * read. 0, or -1 after a message.
 */
static int read_msrs(const struct vcpu *v, struct kvm_msrs *m)
{
	size_t sz = sizeof(*m) + MSRS_MAX * sizeof(m->entries[0]);
	struct kvm_msrs *t = calloc(1, sz);
	unsigned int from = 0, kept = 0;

	if (!t)
		return -1;
	while (from < m->nmsrs) {
		int r;

		t->nmsrs = m->nmsrs - from;
		memcpy(t->entries, &m->entries[from], t->nmsrs * sizeof(t->entries[0]));
		r = ioctl(v->fd, KVM_GET_MSRS, t);
		if (r < 0) {
			pr_errno("KVM_GET_MSRS (vCPU %u)", v->id);
			free(t);
			return -1;
		}
		memmove(&m->entries[kept], t->entries, r * sizeof(t->entries[0]));
		kept += r;
		from += r + 1;	/* the refused one, if any, is skipped */
	}
	m->nmsrs = kept;
	free(t);
	return 0;
}

/* Take index out of m (its value, *found), keeping the rest in order. */
static uint64_t take_msr(struct kvm_msrs *m, uint32_t index, int *found)
{
	uint64_t data = 0;
	unsigned int i, j = 0;

	*found = 0;
	for (i = 0; i < m->nmsrs; i++) {
		if (m->entries[i].index == index) {
			data = m->entries[i].data;
			*found = 1;
			continue;
		}
		m->entries[j++] = m->entries[i];
	}
	m->nmsrs = j;
	return data;
}

/*
 * KVM_SET_MSRS stops at the first MSR it refuses. One whose value this
 * vCPU already has is not lost (KVM refuses a write of 0 to
 * MSR_KVM_ASYNC_PF_INT without an in-kernel LAPIC, say, though it reads
 * it): skipped. Any other is a state this KVM cannot take: the restore
 * fails naming it. 0, or -1 after a message.
 */
static int write_msrs(const struct vcpu *v, struct kvm_msrs *m)
{
	unsigned int from = 0;

	while (from < m->nmsrs) {
		struct kvm_msr_entry refused;
		uint32_t n = m->nmsrs - from;
		uint64_t have = 0;
		struct kvm_msrs *t;
		int r;

		t = malloc(sizeof(*t) + n * sizeof(t->entries[0]));
		if (!t)
			return -1;
		t->nmsrs = n;
		t->pad = 0;
		memcpy(t->entries, &m->entries[from], n * sizeof(t->entries[0]));
		r = ioctl(v->fd, KVM_SET_MSRS, t);
		free(t);
		if (r < 0) {
			pr_errno("KVM_SET_MSRS (vCPU %u)", v->id);
			return -1;
		}
		if ((uint32_t)r == n)
			return 0;
		refused = m->entries[from + r];
		if (vcpu_get_msr(v->fd, v->id, refused.index, &have) || have != refused.data) {
			pr_err("vCPU %u's state: KVM refused MSR %#x = %#llx (this vCPU has %#llx)",
			       v->id, refused.index, (unsigned long long)refused.data,
			       (unsigned long long)have);
			return -1;
		}
		from += r + 1;
	}
	return 0;
}

int vcpu_state_save(struct vcpu *v, struct device_stream *out)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_xcrs xcrs;
	struct kvm_mp_state mp;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;
	struct kvm_debugregs dbg;
	struct kvm_msrs *m = msrs_to_carry(v);
	int r = -1;

	if (!m || read_msrs(v, m))
		goto out;
	if (vcpu_ioctl(v, KVM_GET_REGS, &regs) < 0 || vcpu_ioctl(v, KVM_GET_SREGS, &sregs) < 0)
		goto out;
	put_piece(out, TAG_REGS, &regs, sizeof(regs));
	put_piece(out, TAG_SREGS, &sregs, sizeof(sregs));
	if (has_cap(v, KVM_CAP_XSAVE)) {
		size_t n = xsave_size(v);
		void *xs = calloc(1, n);

		if (!xs || vcpu_ioctl(v, n > sizeof(struct kvm_xsave) ? KVM_GET_XSAVE2 :
					 KVM_GET_XSAVE, xs) < 0) {
			free(xs);
			goto out;
		}
		put_piece(out, TAG_XSAVE, xs, n);
		free(xs);
	} else {
		struct kvm_fpu fpu;

		if (vcpu_ioctl(v, KVM_GET_FPU, &fpu) < 0)
			goto out;
		put_piece(out, TAG_FPU, &fpu, sizeof(fpu));
	}
	memset(&xcrs, 0, sizeof(xcrs));
	if (has_cap(v, KVM_CAP_XCRS) && vcpu_ioctl(v, KVM_GET_XCRS, &xcrs) < 0)
		goto out;
	put_piece(out, TAG_XCRS, &xcrs, sizeof(xcrs));
	put_piece(out, TAG_MSRS, m, sizeof(*m) + m->nmsrs * sizeof(m->entries[0]));
	if (vcpu_ioctl(v, KVM_GET_MP_STATE, &mp) < 0 ||
	    vcpu_ioctl(v, KVM_GET_VCPU_EVENTS, &events) < 0 ||
	    vcpu_ioctl(v, KVM_GET_DEBUGREGS, &dbg) < 0)
		goto out;
	put_piece(out, TAG_MP, &mp, sizeof(mp));
	/* the bare-metal guest's VM has no in-kernel irqchip, so no local APIC: an empty piece */
	if (ioctl(v->fd, KVM_GET_LAPIC, &lapic) == 0)
		put_piece(out, TAG_LAPIC, &lapic, sizeof(lapic));
	else if (errno == ENXIO || errno == EINVAL)
		put_piece(out, TAG_LAPIC, NULL, 0);
	else if (vcpu_ioctl(v, KVM_GET_LAPIC, &lapic) < 0)	/* names the failure */
		goto out;
	put_piece(out, TAG_EVENTS, &events, sizeof(events));
	put_piece(out, TAG_DEBUG, &dbg, sizeof(dbg));
	{
		struct smca_saved s;

		smca_save_vcpu(v, &s);
		put_piece(out, TAG_SMCA, &s, sizeof(s));
	}
	if (out->failed)
		pr_err("vCPU %u's state: no room in the stream", v->id);
	else
		r = 0;
out:
	free(m);
	return r;
}

int vcpu_state_restore(struct vcpu *v, struct device_stream *in)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_xcrs xcrs;
	struct kvm_mp_state mp;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;
	struct kvm_debugregs dbg;
	struct smca_saved smca;
	uint64_t tsc_deadline = 0;
	int has_deadline = 0;
	const void *p;
	uint32_t n;
	void *buf;
	int r;

	if (get_piece(in, v, TAG_REGS, &regs, sizeof(regs)) ||
	    get_piece(in, v, TAG_SREGS, &sregs, sizeof(sregs)))
		return -1;
	if (has_cap(v, KVM_CAP_XSAVE)) {
		size_t want = xsave_size(v);

		if (next_piece(in, v, TAG_XSAVE, &p, &n))
			return -1;
		if (n > want) {
			pr_err("vCPU %u's state: an XSAVE area of %u bytes; this KVM takes %zu",
			       v->id, n, want);
			return -1;
		}
		buf = calloc(1, want);
		if (!buf)
			return -1;
		memcpy(buf, p, n);
		r = vcpu_ioctl(v, KVM_SET_XSAVE, buf);
		free(buf);
		if (r < 0)
			return -1;
	} else {
		struct kvm_fpu fpu;

		if (get_piece(in, v, TAG_FPU, &fpu, sizeof(fpu)) ||
		    vcpu_ioctl(v, KVM_SET_FPU, &fpu) < 0)
			return -1;
	}
	if (get_piece(in, v, TAG_XCRS, &xcrs, sizeof(xcrs)))
		return -1;
	if (xcrs.nr_xcrs && vcpu_ioctl(v, KVM_SET_XCRS, &xcrs) < 0)
		return -1;
	/* after the registers: EFER and the APIC base are in both */
	if (vcpu_ioctl(v, KVM_SET_SREGS, &sregs) < 0 || vcpu_ioctl(v, KVM_SET_REGS, &regs) < 0)
		return -1;
	if (next_piece(in, v, TAG_MSRS, &p, &n))
		return -1;
	{
		struct kvm_msrs hdr;

		if (n < sizeof(hdr))
			goto msrs_bad;
		memcpy(&hdr, p, sizeof(hdr));
		if (hdr.nmsrs > MSRS_MAX || n != sizeof(hdr) + hdr.nmsrs * sizeof(struct kvm_msr_entry))
			goto msrs_bad;
		buf = malloc(n);
		if (!buf)
			return -1;
		memcpy(buf, p, n);
		tsc_deadline = take_msr(buf, MSR_IA32_TSC_DEADLINE, &has_deadline);
		r = write_msrs(v, buf);
		free(buf);
		if (r)
			return -1;
	}
	if (get_piece(in, v, TAG_MP, &mp, sizeof(mp)) || next_piece(in, v, TAG_LAPIC, &p, &n))
		return -1;
	if (n && n != sizeof(lapic)) {
		pr_err("vCPU %u's state: a local APIC of %u bytes", v->id, n);
		return -1;
	}
	if (n)
		memcpy(&lapic, p, n);
	if (get_piece(in, v, TAG_EVENTS, &events, sizeof(events)) ||
	    get_piece(in, v, TAG_DEBUG, &dbg, sizeof(dbg)) ||
	    get_piece(in, v, TAG_SMCA, &smca, sizeof(smca)))
		return -1;
	/* the APIC after the MSRs (its base), events after the APIC (KVM_SET_LAPIC clears them) */
	if (vcpu_ioctl(v, KVM_SET_MP_STATE, &mp) < 0 ||
	    (n && vcpu_ioctl(v, KVM_SET_LAPIC, &lapic) < 0))
		return -1;
	/* take every field the stream has, as QEMU does */
	events.flags |= KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SIPI_VECTOR |
			KVM_VCPUEVENT_VALID_SHADOW | KVM_VCPUEVENT_VALID_SMM;
	/*
	 * The TSC deadline after the local APIC: KVM drops the write unless
	 * LVTT is already in deadline mode, and KVM_SET_LAPIC would leave the
	 * timer unarmed (QEMU's kvm_put_tscdeadline_msr() does the same).
	 */
	if (has_deadline && vcpu_set_msr(v->fd, v->id, MSR_IA32_TSC_DEADLINE, tsc_deadline))
		return -1;
	if (vcpu_ioctl(v, KVM_SET_VCPU_EVENTS, &events) < 0 ||
	    vcpu_ioctl(v, KVM_SET_DEBUGREGS, &dbg) < 0)
		return -1;
	return smca_restore_vcpu(v, &smca);
msrs_bad:
	pr_err("vCPU %u's state: its MSR list is damaged (%u bytes)", v->id, n);
	return -1;
}
