// SPDX-License-Identifier: GPL-2.0
/*
 * A huge host page lost under a guest that takes only 4 KiB-granular
 * machine checks: the pages of the extent around the one told, one AO each
 * (spread.h).
 */
#define _GNU_SOURCE
#include "mce/spread.h"

#include <signal.h>

#include "clock.h"
#include "core/report.h"
#include "core/vm.h"
#include "mce/mce.h"
#include "mce/mce_delivery.h"

/* Whether the guest heard of every page of ext. Under poison.lock. */
static int all_notified(struct vm *vm, const struct gpa_extent *ext)
{
	uint64_t page;

	for (page = ext->gpa; page < ext->gpa + ext->len; page += GUEST_PAGE_SIZE)
		if (!poison_list_contains(&vm->poison->notified, page))
			return 0;
	return 1;
}

void mce_spread_add(struct vm *vm, const struct pending_mce *p)
{
	struct gpa_extent w;
	unsigned int i;
	int known = 0;

	/*
	 * Linux guests only: the bare-metal guest with --mce-lsb page retires
	 * each page as it touches it, one AR each, which its test counts.
	 */
	if (!vm->mce_spread || !(vm->mce_style & MCE_STYLE_PAGE_LSB) ||
	    p->ext.len <= GUEST_PAGE_SIZE)
		return;
	w = mce_spread_window(&p->ext, p->mce.addr);
	pthread_mutex_lock(&vm->poison->lock);
	for (i = 0; i < MAX_SPREADS; i++)
		known |= vm->poison->spread[i].end && vm->poison->spread[i].gpa == w.gpa;
	/*
	 * Or told already, by an earlier spread: an AR for a page the guest has
	 * not yet taken from its bank comes after the spread ended.
	 */
	if (!known)
		known = all_notified(vm, &w);
	for (i = 0; i < MAX_SPREADS && !known; i++)
		if (!vm->poison->spread[i].end) {
			vm->poison->spread[i] = (struct mce_spread) {
				.gpa = w.gpa, .end = w.gpa + w.len,
				.next = w.gpa, .t_start = monotonic_ns(),
			};
			__atomic_fetch_add(&vm->poison->spreads_active, 1, __ATOMIC_RELEASE);
			report("poison_spread", "\"gpa\":\"%#llx\",\"pages\":%llu,"
			       "\"extent_gpa\":\"%#llx\",\"extent_pages\":%llu,"
			       "\"status\":\"telling\",\"reason\":\"the host lost the whole extent; "
			       "the guest takes 4 KiB machine checks: one AO per page%s\"",
			       (unsigned long long)w.gpa, (unsigned long long)(w.len / GUEST_PAGE_SIZE),
			       (unsigned long long)p->ext.gpa,
			       (unsigned long long)(p->ext.len / GUEST_PAGE_SIZE),
			       w.len < p->ext.len ? ", for the 2 MiB around the page told; the rest "
			       "as the guest touches it" : "");
			break;
		}
	pthread_mutex_unlock(&vm->poison->lock);
	if (!known && i == MAX_SPREADS)
		report("poison_spread", "\"gpa\":\"%#llx\",\"pages\":%llu,\"status\":\"dropped\","
		       "\"reason\":\"more than %d huge pages being told at once\"",
		       (unsigned long long)w.gpa,
		       (unsigned long long)(w.len / GUEST_PAGE_SIZE), MAX_SPREADS);
}

int mce_spread_take(struct vcpu *v, struct pending_mce *p)
{
	struct vm *vm = v->vm;
	struct sigbus_event ev = { .code = BUS_MCEERR_AO, .lsb = 12 };
	unsigned int i;
	int found = 0;

	pthread_mutex_lock(&vm->poison->lock);
	for (i = 0; i < MAX_SPREADS && !found; i++) {
		struct mce_spread *sp = &vm->poison->spread[i];

		while (sp->end && sp->next < sp->end && !found) {
			uint64_t page = sp->next;
			const struct memslot *s = memslot_find_gpa(&vm->mem, page);

			sp->next += GUEST_PAGE_SIZE;
			/* a page the guest heard of already (the AR that began it) */
			if (poison_list_add(&vm->poison->notified, page, GUEST_PAGE_SIZE) == 0)
				continue;
			sp->told++;
			found = 1;
			ev.addr = (uintptr_t)s->hva + (page - s->gpa);
		}
		if (sp->end && sp->next >= sp->end) {
			report("poison_spread", "\"gpa\":\"%#llx\",\"pages\":%llu,\"told\":%lu,"
			       "\"status\":\"done\",\"duration_ns\":%llu",
			       (unsigned long long)sp->gpa,
			       (unsigned long long)((sp->end - sp->gpa) / GUEST_PAGE_SIZE), sp->told,
			       (unsigned long long)(monotonic_ns() - sp->t_start));
			sp->end = 0;
			__atomic_fetch_sub(&vm->poison->spreads_active, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&vm->poison->lock);
	if (!found)
		return 0;
	/* as if the kernel had sent an AO for that one page: the same encoding */
	ev.t_ns = monotonic_ns();
	return mce_event_prepare(&vm->mem, vm->mce_style, &ev, p) == 0;
}
