// SPDX-License-Identifier: GPL-2.0
#include "mce/mce_event.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "hwlab_abi.h"
#include "mce/mce.h"
#include "core/report.h"

unsigned int mce_event_max_lsb(enum memslot_backing b)
{
	return b == BACKING_HUGETLB_1G ? POISON_LSB_MAX_1G : POISON_LSB_MAX;
}

int mce_event_prepare(const struct memslot_table *mem, int style, const struct sigbus_event *ev,
		      struct pending_mce *p)
{
	enum mce_kind kind = ev->code == BUS_MCEERR_AR ? MCE_AR : MCE_AO;
	void (*encode)(enum mce_kind, uint64_t, struct kvm_x86_mce *) =
		(style & MCE_STYLE_SMCA) ? mce_encode_smca :
		(style & MCE_STYLE_AMD) ? mce_encode_amd : mce_encode;

	struct gpa_extent page = { 0 };
	unsigned int max = POISON_LSB_MAX;

	*p = (struct pending_mce) { .ev = *ev, .lsb = ev->lsb };
	/* the slot first: how large an extent its pages can lose */
	if (!memslot_translate(mem, ev->addr, 12, &page))
		max = mce_event_max_lsb(page.slot->backing);
	if (ev->lsb < POISON_LSB_MIN || ev->lsb > (int)max) {
		p->lsb = 12;
		p->lsb_out_of_range = 1;
	} else if (ev->lsb > 12 && page.slot && !memslot_backing_is_hugetlb(page.slot->backing)) {
		/*
		 * A THP the kernel could not split (something holds a reference
		 * to it: a pinning device, a pipe): since v6.11 it signals the
		 * folio's shift, yet it poisons only the 4 KiB page at si_addr
		 * and leaves the whole folio mapped, the other 511 pages intact.
		 * Telling the guest 2 MiB would retire (a Linux guest: kill for)
		 * healthy memory.
		 */
		p->lsb = 12;
		p->lsb_unsplit_thp = 1;
	}
	if (memslot_translate(mem, ev->addr, p->lsb, &p->ext))
		return -1;	/* p->ext stays zeroed: slot NULL says outside RAM */
	if (p->ext.len > GUEST_PAGE_SIZE && (style & MCE_STYLE_PAGE_LSB)) {
		/*
		 * Linux guests ignore an address whose LSB is above PAGE_SHIFT
		 * (mce_usable_address()): name the 4 KiB page at si_addr, with
		 * LSB 12; the guest's next touch of the rest brings another AR.
		 */
		const struct memslot *s = p->ext.slot;
		uint64_t page = s->gpa + ((ev->addr - (uintptr_t)s->hva) & ~(GUEST_PAGE_SIZE - 1));

		encode(kind, page, &p->mce);
	} else {
		encode(kind, p->ext.gpa, &p->mce);
		/*
		 * A huge page is lost whole: say so in MCi_MISC's address LSB,
		 * the one place the guest reads it (an SMCA encoding too).
		 */
		if (p->ext.len > GUEST_PAGE_SIZE) {
			p->mce.misc = (HWLAB_MCI_MISC & ~MCI_MISC_LSB_MASK) | p->lsb;
			p->mce.status |= MCI_STATUS_MISCV;
		}
	}
	return 0;
}

int mce_event_prepare_page(const struct memslot_table *mem, int style, const struct memslot *s,
			   const struct sigbus_event *ev, uint64_t gpa, struct pending_mce *q)
{
	struct sigbus_event page_ev = *ev;

	page_ev.addr = (uintptr_t)s->hva + (gpa - s->gpa);
	page_ev.lsb = 12;
	return mce_event_prepare(mem, style, &page_ev, q);
}

struct gpa_extent mce_spread_window(const struct gpa_extent *ext, uint64_t told_gpa)
{
	struct gpa_extent w = *ext;
	uint64_t lo = told_gpa & ~(MCE_SPREAD_MAX - 1), hi = lo + MCE_SPREAD_MAX;

	if (told_gpa < ext->gpa || told_gpa - ext->gpa >= ext->len)
		return w;	/* not in the extent: nothing to narrow it by */
	if (lo > ext->gpa)
		w.gpa = lo;
	if (hi < ext->gpa + ext->len)
		w.len = hi - w.gpa;
	else
		w.len = ext->gpa + ext->len - w.gpa;
	return w;
}

void mce_event_report(int vcpu_id, const struct pending_mce *p, const char *action,
		      const char *reason)
{
	char gpa[24] = "null", vcpu[12] = "null", mce[192] = "", lsb[48] = "", queued[40] = "";
	char told[160] = "";
	uint64_t now = monotonic_ns();

	if (p->ext.slot)
		snprintf(gpa, sizeof(gpa), "\"%#llx\"", (unsigned long long)p->ext.gpa);
	if (vcpu_id != MCE_EVENT_NO_VCPU)
		snprintf(vcpu, sizeof(vcpu), "%d", vcpu_id);
	/* The machine check that was (or would have been) injected. */
	if (p->ext.slot && strcmp(action, "ignore"))
		snprintf(mce, sizeof(mce),
			 ",\"mci_status\":\"%#llx\",\"mcg_status\":\"%#llx\",\"mci_addr\":\"%#llx\","
			 "\"mci_misc\":\"%#llx\",\"bank\":%u",
			 (unsigned long long)p->mce.status, (unsigned long long)p->mce.mcg_status,
			 (unsigned long long)p->mce.addr, (unsigned long long)p->mce.misc,
			 p->mce.bank);
	/* splits an AO's time into the monitor's wakeup and the vCPU's next exit */
	if (p->t_queued)
		snprintf(queued, sizeof(queued), ",\"queued_t_ns\":%llu",
			 (unsigned long long)p->t_queued);
	/* how the guest hears of it: an #MC, its deferred-error interrupt, or its poll */
	if (p->told)
		snprintf(told, sizeof(told), ",\"told\":\"%s\"%s%s%s", p->told,
			 p->told_why ? ",\"told_why\":\"" : "", p->told_why ? p->told_why : "",
			 p->told_why ? "\"" : "");
	if (p->lsb_out_of_range)
		snprintf(lsb, sizeof(lsb), ",\"lsb_out_of_range\":true,\"lsb_used\":%u", p->lsb);
	else if (p->lsb_unsplit_thp)
		snprintf(lsb, sizeof(lsb), ",\"unsplit_thp\":true,\"lsb_used\":%u", p->lsb);
	/*
	 * recipient, action, action_required, recursive: QEMU's MEMORY_FAILURE
	 * event's words (qapi/run-state.json), so that one reader takes both
	 * VMMs' reports (hwpoison-guest --watch prints QEMU's through libvirt).
	 * "stop" is ours alone: where QEMU resets a guest that cannot take the
	 * machine check, hwlab-vmm stops it unless told to reset.
	 */
	report("sigbus",
	       "\"si_code\":\"%s\",\"hva\":\"%#lx\",\"gpa\":%s,\"lsb\":%d%s,\"pages\":%llu,"
	       "\"recipient\":\"%s\",\"action\":\"%s\",\"action_required\":%s,\"recursive\":%s,"
	       "\"vcpu\":%s,\"latency_ns\":%llu,\"signal_t_ns\":%llu%s%s%s%s%s%s",
	       sigbus_code_name(p->ev.code), (unsigned long)p->ev.addr, gpa, p->ev.lsb, lsb,
	       (unsigned long long)(p->ext.slot ? p->ext.len / GUEST_PAGE_SIZE : 0),
	       p->ext.slot ? "guest" : "hypervisor", action,
	       p->ev.code == BUS_MCEERR_AR ? "true" : "false", p->recursive ? "true" : "false", vcpu,
	       (unsigned long long)(now - p->ev.t_ns), (unsigned long long)p->ev.t_ns, queued, mce, told,
	       reason ? ",\"reason\":\"" : "", reason ? reason : "", reason ? "\"" : "");
}
