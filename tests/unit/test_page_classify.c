// SPDX-License-Identifier: GPL-2.0
/*
 * lib/hwpoison_inject.c: which pages a tool may poison. Each row is a
 * pagemap entry and the kpageflags word of its PFN, as the kernel reports
 * them for the case named.
 */
#include "hwpoison_inject.h"
#include "unit.h"

#define PRESENT		PAGEMAP_PRESENT_BIT
#define EXCL		PAGEMAP_EXCLUSIVE_BIT
#define F(bit)		(1ULL << (bit))
#define FILE		PAGEMAP_FILE_BIT

#define KPF_THP		22

static const struct {
	const char *what;
	uint64_t entry, kpageflags;
	enum page_verdict want;
} rows[] = {
	{ "a page the guest wrote", PRESENT | EXCL | 0x1234, F(KPF_ANON), PAGE_OK },
	{ "a THP the guest wrote", PRESENT | EXCL | 0x200, F(KPF_ANON) | F(KPF_THP), PAGE_OK },
	{ "never touched", 0, 0, PAGE_NOT_PRESENT },
	{ "swapped out", PAGEMAP_SWAP_BIT | 0x55, 0, PAGE_SWAPPED },
	{ "PFN hidden without CAP_SYS_ADMIN", PRESENT | EXCL, 0, PAGE_PFN_HIDDEN },
	/* a read fault maps the zero page: present, not exclusive */
	{ "the zero page", PRESENT | 0x9a7, F(KPF_ZERO_PAGE), PAGE_ZERO },
	{ "the huge zero page", PRESENT | 0x4000, F(KPF_ZERO_PAGE) | F(KPF_THP), PAGE_ZERO },
	/* even if pagemap ever called it exclusive, a zero page is refused */
	{ "zero page flagged exclusive", PRESENT | EXCL | 0x9a7, F(KPF_ZERO_PAGE), PAGE_ZERO },
	{ "a KSM page", PRESENT | 0x777, F(KPF_KSM) | F(KPF_ANON), PAGE_KSM },
	{ "a KSM page mapped once", PRESENT | EXCL | 0x777, F(KPF_KSM) | F(KPF_ANON), PAGE_KSM },
	{ "no struct page", PRESENT | EXCL | 0xfee00, F(KPF_NOPAGE), PAGE_NO_STRUCT_PAGE },
	{ "shared with a forked child", PRESENT | 0x1234, F(KPF_ANON), PAGE_SHARED },
	{ "a private hugetlb page", PRESENT | EXCL | 0x8000, F(KPF_ANON) | F(KPF_HUGE), PAGE_OK },
	/* mapped once, yet not the guest's: the VMM's own data, a kernel page */
	{ "a file page mapped once (the VMM's .data)", PRESENT | EXCL | FILE | 0x4e0, 0,
	  PAGE_NOT_ANON },
	{ "a shared mapping of a kernel page (kvm_run)", PRESENT | EXCL | FILE | 0x9000, 0,
	  PAGE_NOT_ANON },
	{ "no PM_FILE but not anonymous either", PRESENT | EXCL | 0x4e1, 0, PAGE_NOT_ANON },
};

/* page_classify_ram() for a slot of hwlab-vmm's shared hugetlb memfd */
static const struct {
	const char *what;
	uint64_t entry, kpageflags;
	enum page_verdict want;
} shared_rows[] = {
	{ "a page of the shared hugetlb memfd", PRESENT | EXCL | FILE | 0x8000, F(KPF_HUGE),
	  PAGE_OK },
	{ "the memfd page mapped by another process too", PRESENT | FILE | 0x8000, F(KPF_HUGE),
	  PAGE_SHARED },
	{ "a file page that is not hugetlb", PRESENT | EXCL | FILE | 0x4e0, 0, PAGE_NOT_ANON },
	{ "a kernel page", PRESENT | EXCL | FILE | 0x9000, F(KPF_NOPAGE), PAGE_NO_STRUCT_PAGE },
	{ "a salvaged 4 KiB page (anonymous)", PRESENT | EXCL | 0x1234, F(KPF_ANON), PAGE_OK },
	{ "the zero page", PRESENT | 0x9a7, F(KPF_ZERO_PAGE), PAGE_ZERO },
};

/* page_classify_ram() for a slot of hwlab-vmm's shmem memfd (--backing shmem) */
static const struct {
	const char *what;
	uint64_t entry, kpageflags;
	enum page_verdict want;
} shmem_rows[] = {
	{ "a page of the shmem memfd", PRESENT | EXCL | FILE | 0x4e0, F(KPF_LRU), PAGE_OK },
	{ "the shmem page mapped by another process too", PRESENT | FILE | 0x4e0, F(KPF_LRU),
	  PAGE_SHARED },
	{ "a hugetlb file page in a shmem slot", PRESENT | EXCL | FILE | 0x8000, F(KPF_HUGE),
	  PAGE_NOT_ANON },
	{ "a kernel page", PRESENT | EXCL | FILE | 0x9000, F(KPF_NOPAGE), PAGE_NO_STRUCT_PAGE },
	{ "the zero page", PRESENT | 0x9a7, F(KPF_ZERO_PAGE), PAGE_ZERO },
};

UNIT_TEST(page_classify, "which pages a tool may poison")
{
	unsigned int i;

	for (i = 0; i < sizeof(shared_rows) / sizeof(shared_rows[0]); i++) {
		enum page_verdict got = page_classify_ram(shared_rows[i].entry,
							  shared_rows[i].kpageflags,
							  SHARED_RAM_HUGETLB);

		CHECK(got == shared_rows[i].want, "%s: verdict %d, want %d", shared_rows[i].what,
		      got, shared_rows[i].want);
	}
	for (i = 0; i < sizeof(shmem_rows) / sizeof(shmem_rows[0]); i++) {
		enum page_verdict got = page_classify_ram(shmem_rows[i].entry,
							  shmem_rows[i].kpageflags, SHARED_RAM_SHMEM);

		CHECK(got == shmem_rows[i].want, "%s: verdict %d, want %d", shmem_rows[i].what,
		      got, shmem_rows[i].want);
	}
	/* outside such a slot the memfd page is what it is: not anonymous */
	CHECK_EQ(page_classify_ram(PRESENT | EXCL | FILE | 0x8000, F(KPF_HUGE), SHARED_RAM_NONE),
		 PAGE_NOT_ANON);
	CHECK_EQ(page_classify_ram(PRESENT | EXCL | FILE | 0x4e0, F(KPF_LRU), SHARED_RAM_NONE),
		 PAGE_NOT_ANON);

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum page_verdict got = page_classify(rows[i].entry, rows[i].kpageflags);

		CHECK(got == rows[i].want, "%s: verdict %d, want %d (%s)", rows[i].what, got,
		      rows[i].want, page_verdict_why(rows[i].want));
	}
	/* every refusal says why in words */
	for (i = PAGE_OK; i <= PAGE_NOT_ANON; i++)
		CHECK(page_verdict_why(i)[0] != '?', "verdict %u has a reason", i);
}
