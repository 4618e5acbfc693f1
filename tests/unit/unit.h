/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal test harness: each CHECK is one counted assertion. */
#ifndef HWLAB_UNIT_H
#define HWLAB_UNIT_H

#include <stddef.h>
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

/*
 * UNIT_TEST(name, description) { ... } defines a test and registers it,
 * in one place: the function test_<name> and a constructor that adds it to
 * main.c's table. name is what `unit-tests NAME` selects (and --list
 * shows); description is what its ok/FAIL/skip line says. main.c
 * runs the table in source order (file name, then line), whatever order
 * the linker ran the constructors in.
 */
struct unit_test {
	const char *name;
	const char *desc;
	void (*fn)(void);
	const char *file;
	int line;
	struct unit_test *next;
};

void unit_register(struct unit_test *t);
void unit_skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#define UNIT_TEST(id, description)						\
	static void test_##id(void);						\
	static struct unit_test unit_test_##id = {				\
		.name = #id, .desc = description, .fn = test_##id,		\
		.file = __FILE__, .line = __LINE__,				\
	};									\
	static void __attribute__((constructor)) unit_register_##id(void)	\
	{									\
		unit_register(&unit_test_##id);					\
	}									\
	static void test_##id(void)

/*
 * UNIT_SKIP("reason", ...): the test cannot run on this host (no usable
 * /dev/kvm, say). It stops there, from any depth, and main.c prints
 * "skip DESCRIPTION: reason" and counts it skipped, as the KVM selftests'
 * TEST_REQUIRE gives KSFT_SKIP. Release what the test holds first: the
 * stop is a longjmp. UNIT_REQUIRE(cond, "reason", ...) skips unless cond.
 */
#define UNIT_SKIP(...) unit_skip(__VA_ARGS__)
#define UNIT_REQUIRE(cond, ...)							\
	do {									\
		if (!(cond))							\
			unit_skip(__VA_ARGS__);					\
	} while (0)

/*
 * What the code between unit_stderr_catch() and unit_stderr_caught() wrote
 * to stderr (fd 2), into out (NUL-terminated, cut to len - 1 bytes), for a
 * test of a message's text. Returns the number of bytes kept.
 */
void unit_stderr_catch(void);
size_t unit_stderr_caught(char *out, size_t len);

#endif
