// SPDX-License-Identifier: GPL-2.0
/*
 * The VM's lifetime: creating it on /dev/kvm, stopping and kicking its vCPUs.
 * What the other layers add to it (MCE style, the guest kind's devices,
 * guest RAM) machine.c composes after vm_create().
 */
#include "core/vm.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

#include "core/kvm_dev.h"
#include "core/kvm_ioctl.h"
#include "log.h"
#include "x86/cpuid.h"

int vm_create(struct vm *vm, const struct vmm_options *opt)
{
	vm->opt = opt;
	device_bus_init(&vm->devices);
	guest_poison_init(&vm->poisoned);
	vm->boot_count = 1;
	pthread_mutex_init(&vm->pause_lock, NULL);
	pthread_cond_init(&vm->pause_cond, NULL);
	vm->kvm_fd = kvm_dev_open();
	if (vm->kvm_fd < 0)
		return -1;
	vm->vm_fd = kvm_ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return -1;
	vm->run_size = kvm_ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size < 0)
		return -1;
	if ((unsigned long)vm->run_size < sizeof(struct kvm_run)) {
		pr_err("KVM_GET_VCPU_MMAP_SIZE: %ld bytes, less than struct kvm_run", vm->run_size);
		return -1;
	}
	vm->cpuid = kvm_dev_supported_cpuid(vm->kvm_fd);
	if (!vm->cpuid)
		return -1;
	/* XSAVE only as far as the guest can really enable it (cpuid.h) */
	vm->xsetbv_exits = kvm_dev_xsetbv_exits(vm->kvm_fd, vm->cpuid);
	vm->xsave_components = cpuid_fix_xsave(vm->cpuid, vm->xsetbv_exits != 0);
	vm->vendor = cpuid_vendor(vm->cpuid);
	if (cpuid_set_hypervisor(vm->cpuid)) {
		pr_err("KVM_GET_SUPPORTED_CPUID has no leaf 1");
		return -1;
	}
	return 0;
}

void vm_kick_all(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++)
		vcpu_thread_kick(&vm->vcpus[i].thread);
}

void vm_stop(struct vm *vm, int reset)
{
	if (reset)
		vm->reset_requested = 1;
	vm->stop = 1;
	/* a paused vCPU waits on the condition, not in KVM_RUN */
	pthread_mutex_lock(&vm->pause_lock);
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
	vm_kick_all(vm);
}

/* vCPU threads that run their loop now: those a pause waits for. */
static unsigned int threads_running(struct vm *vm)
{
	unsigned int i, n = 0;

	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		struct vcpu_thread *t = &vm->vcpus[i].thread;

		pthread_mutex_lock(&t->lock);
		n += t->started && !t->closed;
		pthread_mutex_unlock(&t->lock);
	}
	return n;
}

int vm_pause(struct vm *vm, uint64_t timeout_ns)
{
	struct timespec now;
	uint64_t waited = 0;
	int all;

	__atomic_store_n(&vm->pause, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		vm_kick_all(vm);
		pthread_mutex_lock(&vm->pause_lock);
		all = vm->paused >= threads_running(vm);
		if (!all) {
			/* a thread that closes meanwhile does not signal: look again every 10 ms */
			clock_gettime(CLOCK_REALTIME, &now);
			now.tv_nsec += 10000000;
			if (now.tv_nsec >= 1000000000) {
				now.tv_sec++;
				now.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&vm->pause_cond, &vm->pause_lock, &now);
			all = vm->paused >= threads_running(vm);
		}
		pthread_mutex_unlock(&vm->pause_lock);
		if (all)
			return 0;
		waited += 10000000;
		if (waited >= timeout_ns) {
			vm_resume(vm);
			return -1;
		}
	}
}

void vm_resume(struct vm *vm)
{
	pthread_mutex_lock(&vm->pause_lock);
	__atomic_store_n(&vm->pause, 0, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
}

void vm_pause_point(struct vcpu *v)
{
	struct vm *vm = v->vm;

	if (!__atomic_load_n(&vm->pause, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&vm->pause_lock);
	vm->paused++;
	pthread_cond_broadcast(&vm->pause_cond);
	while (__atomic_load_n(&vm->pause, __ATOMIC_SEQ_CST) && !vm->stop)
		pthread_cond_wait(&vm->pause_cond, &vm->pause_lock);
	vm->paused--;
	pthread_mutex_unlock(&vm->pause_lock);
}
