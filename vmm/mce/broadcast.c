// SPDX-License-Identifier: GPL-2.0
#include "mce/broadcast.h"

#include <errno.h>
#include <string.h>

#include "core/report.h"
#include "core/vm.h"
#include "mce/mce.h"
#include "mce/mce_delivery.h"

void mce_broadcast_send(struct vcpu *v)
{
	struct vm *vm = v->vm;
	unsigned int i;

	if (!(vm->mce_style & MCE_STYLE_BROADCAST))
		return;
	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		struct vcpu *o = &vm->vcpus[i];

		if (o == v)
			continue;
		pthread_mutex_lock(&o->thread.lock);
		if (!o->thread.closed) {
			o->mce->broadcasts++;
			o->mce->broadcast_origin = v->id;
			vcpu_thread_kick_locked(&o->thread);
		}
		pthread_mutex_unlock(&o->thread.lock);
	}
}

int mce_broadcast_deliver(struct vcpu *v)
{
	struct kvm_x86_mce mce;
	enum mce_guest_state state;
	unsigned int n, origin;

	pthread_mutex_lock(&v->thread.lock);
	n = v->mce->broadcasts;
	origin = v->mce->broadcast_origin;
	v->mce->broadcasts = 0;
	pthread_mutex_unlock(&v->thread.lock);
	if (!n)
		return 0;
	mce_encode_broadcast(&mce);
	state = mce_guest_state(v);
	if (state != MCE_GUEST_READY) {
		/* already in an #MC (its own, which has it in the rendezvous), or none */
		report("mce_broadcast", "\"vcpu\":%u,\"origin_vcpu\":%u,\"count\":%u,"
		       "\"action\":\"ignore\",\"reason\":\"%s\"", v->id, origin, n,
		       mce_guest_state_reason(state));
		return 0;
	}
	if (mce_inject(v, &mce)) {
		report("mce_broadcast", "\"vcpu\":%u,\"origin_vcpu\":%u,\"count\":%u,"
		       "\"action\":\"fatal\",\"reason\":\"KVM_X86_SET_MCE: %s\"", v->id, origin, n,
		       strerror(errno));
		v->state = VCPU_FAILED;
		vm_stop(v->vm, 0);
		return -1;
	}
	report("mce_broadcast", "\"vcpu\":%u,\"origin_vcpu\":%u,\"count\":%u,\"action\":\"inject\","
	       "\"bank\":%u,\"mci_status\":\"%#llx\",\"mcg_status\":\"%#llx\"", v->id, origin, n,
	       mce.bank, (unsigned long long)mce.status, (unsigned long long)mce.mcg_status);
	return 0;
}
