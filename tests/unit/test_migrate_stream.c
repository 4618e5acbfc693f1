// SPDX-License-Identifier: GPL-2.0
/*
 * The state stream (vmm/migrate/stream.c): what is written comes back, and
 * a cut, a flipped bit, a missing section or another program's file is
 * refused before anyone acts on it. The refusals print their message to
 * stderr, as the VMM would.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "migrate/stream.h"
#include "unit.h"

/* A stream of three sections and the end, in a memfd; its bytes in *all, *len. */
static int write_sample(uint8_t **all, size_t *len)
{
	static const char a[] = "config bytes", c[] = "the last one";
	uint8_t b[5000];
	struct stream s;
	int fd = memfd_create("stream", MFD_CLOEXEC);
	off_t end;

	memset(b, 0x5a, sizeof(b));
	if (fd < 0 || stream_out_open(&s, fd, "memfd") ||
	    stream_put(&s, STREAM_CONFIG, a, sizeof(a)) || stream_put(&s, STREAM_RAM, b, sizeof(b)) ||
	    stream_put(&s, STREAM_VCPU, c, sizeof(c)) || stream_out_close(&s))
		return -1;
	end = lseek(fd, 0, SEEK_END);
	*all = malloc(end);
	*len = end;
	if (!*all || pread(fd, *all, end, 0) != end)
		return -1;
	close(fd);
	return 0;
}

/* Read every section of bytes[0, len): 0 when all came whole up to the end, else -1. */
static int read_all_of(const uint8_t *bytes, size_t len, unsigned int *sections)
{
	int fd = memfd_create("stream", MFD_CLOEXEC), r = -1;
	uint8_t *buf = malloc(STREAM_SECTION_MAX);
	enum stream_section type;
	struct stream s;
	uint32_t n;

	*sections = 0;
	if (fd < 0 || !buf || write(fd, bytes, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET))
		goto out;
	if (stream_in_open(&s, fd, "memfd"))
		goto out;
	for (;;) {
		if (stream_get(&s, &type, buf, &n))
			goto out;
		if (type == STREAM_END)
			break;
		(*sections)++;
	}
	r = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return r;
}

UNIT_TEST(stream_crc32c, "the state stream's CRC-32C: the check value of \"123456789\"")
{
	CHECK_EQ(stream_crc32c(0, "123456789", 9), 0xe3069283u);
	/* in pieces: the same */
	CHECK_EQ(stream_crc32c(stream_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
}

UNIT_TEST(stream_roundtrip, "the state stream: sections come back as written")
{
	uint8_t *all;
	size_t len;
	unsigned int n;

	UNIT_REQUIRE(!write_sample(&all, &len), "writing the sample stream");
	CHECK_EQ(read_all_of(all, len, &n), 0);
	CHECK_EQ(n, 3);
	free(all);
}

UNIT_TEST(stream_refusals, "the state stream: a cut, a flipped bit, a missing section, a foreign file")
{
	uint8_t *all, *copy;
	size_t len, cut, i;
	unsigned int n, refused = 0, tried = 0;
	/* where the sample's sections start: header 16, then 16-byte section headers */
	size_t sec2 = 16 + 16 + 13, sec3 = sec2 + 16 + 5000;

	UNIT_REQUIRE(!write_sample(&all, &len), "writing the sample stream");
	copy = malloc(len);
	UNIT_REQUIRE(copy != NULL, "memory");

	/* every cut, at every byte, is refused: none reads as a whole stream */
	for (cut = 0; cut < len; cut += cut < 64 || len - cut < 64 ? 1 : 97) {
		tried++;
		refused += read_all_of(all, cut, &n) == -1;
	}
	CHECK_EQ(refused, tried);

	/* a flipped bit anywhere: the header, a section's header or payload, the end */
	refused = tried = 0;
	for (i = 0; i < len; i += i < 64 || len - i < 64 ? 1 : 89) {
		memcpy(copy, all, len);
		copy[i] ^= 0x10;
		tried++;
		refused += read_all_of(copy, len, &n) == -1;
	}
	CHECK_EQ(refused, tried);

	/* the RAM section taken out whole: the end's count says so */
	memcpy(copy, all, sec2);
	memcpy(copy + sec2, all + sec3, len - sec3);
	CHECK_EQ(read_all_of(copy, len - (sec3 - sec2), &n), -1);

	/* another program's file, and a later version of ours */
	memcpy(copy, all, len);
	memcpy(copy, "\x7f" "ELF\2\1\1\0", 8);
	CHECK_EQ(read_all_of(copy, len, &n), -1);
	memcpy(copy, all, len);
	copy[8] = 2;
	CHECK_EQ(read_all_of(copy, len, &n), -1);
	/* an empty file */
	CHECK_EQ(read_all_of(all, 0, &n), -1);
	free(copy);
	free(all);
}
