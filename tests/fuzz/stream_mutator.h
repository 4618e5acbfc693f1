/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libFuzzer's custom mutator for the state stream (vmm/migrate/stream.h):
 * an input is read as the stream's header and sections, one section is
 * changed (its payload by libFuzzer's own mutations, or its type, or the
 * sections' order, count or repetition), and every section's CRC-32C and
 * the end section's counts are written again with the stream's own
 * stream_crc32c(), so that most inputs get past the checksums into the
 * parsers behind them. One in 16 leaves a CRC or a count wrong on purpose,
 * and one in 16 is a raw byte mutation of the whole input, so the refusals
 * stay covered too.
 *
 * Built with -DHWLAB_FUZZ_NO_MUTATOR it defines neither hook: the target
 * then fuzzes with libFuzzer's own mutations and crossover only
 * (fuzz-stream-restore-plain, for measuring what the mutator adds).
 */
#ifndef HWLAB_FUZZ_STREAM_MUTATOR_H
#define HWLAB_FUZZ_STREAM_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

/* 1 if data is a stream's sections to its last byte, each with its CRC right. */
unsigned int stream_input_crcs_right(const uint8_t *data, size_t size);

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
				 uint8_t *out, size_t max_out, unsigned int seed);

#endif
