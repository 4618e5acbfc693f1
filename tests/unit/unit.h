/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal test harness: each CHECK is one counted assertion. */
#ifndef HWLAB_UNIT_H
#define HWLAB_UNIT_H

#include <stdio.h>

extern unsigned int unit_passed, unit_failed;

#define CHECK(cond, ...)							\
	do {									\
		if (cond) {							\
			unit_passed++;						\
		} else {							\
			unit_failed++;						\
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
			printf(__VA_ARGS__);					\
			printf("\n");						\
		}								\
	} while (0)

#define CHECK_EQ(a, b)								\
	CHECK((unsigned long long)(a) == (unsigned long long)(b),		\
	      "%s = %#llx, expected %#llx", #a, (unsigned long long)(a),	\
	      (unsigned long long)(b))

void test_memslot(void);
void test_hugetlb_salvage(void);
void test_mce_encode(void);
void test_mce_encode_amd(void);
void test_mce_deferred_bank(void);
void test_mce_encode_broadcast(void);
void test_qmp(void);
void test_memory_failure_event(void);
void test_linux_boot(void);
void test_poison_list(void);
void test_elf_load(void);
void test_mce_event(void);
void test_lib(void);
void test_options(void);
void test_hwpoison_guest_options(void);
void test_opt_engine(void);
void test_ao_ring(void);
void test_ao_ring_threads(void);
void test_mce_delivery(void);
void test_ucall(void);
void test_ratelimit(void);
void test_page_classify(void);
void test_sigbus_foreign(void);
void test_vcpu_reset(void);
void test_outq(void);
void test_cpuid_xsave(void);
void test_pc_io_busiest(void);
void test_pc_io_i8042(void);
void test_pc_io_agp_search(void);

#endif
