/* Position-keyed checksums: what verification compares.
 *
 * Every element of the input matrix A (rows x cols) has a key, its
 * position r * cols + c in A; its copy in the output B = A^T carries the
 * same key.  The checksum of a set of elements is the sum (mod 2^64) of a
 * hash of each element's bytes mixed with its key, so it can be summed in
 * any order, over any blocks, on any rank, and two sets agree only when
 * the same values sit at the same positions: a lost, zeroed, swapped or
 * changed element shows (with probability about 1 - 2^-64; this guards
 * against faults, not against an adversary). */
#ifndef XIO_CHECKSUM_H
#define XIO_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* Checksum of a row-major nrows x ncols block of elem_size-byte elements
 * whose element (i, j) has key first_key + i * row_step + j * col_step.
 * Elements of 1, 2, 4 and 8 bytes are hashed 8 or 4 at a time where the
 * CPU has AVX-512 or AVX2: the same sums, 2-4.5 times faster (one Zen 4
 * core, floats: 6 GB/s scalar, 26 GB/s with AVX-512; tests/bench/RESULTS.md). */
uint64_t xio_checksum_block(const void *block, int64_t nrows, int64_t ncols, size_t elem_size,
                            uint64_t first_key, uint64_t row_step, uint64_t col_step);

/* The instruction sets the sums can use: every one gives the same sums. */
typedef enum { XIO_CHECKSUM_SCALAR, XIO_CHECKSUM_AVX2, XIO_CHECKSUM_AVX512 } xio_checksum_isa;

/* 1 when this CPU runs isa. */
int xio_checksum_isa_available(xio_checksum_isa isa);

/* xio_checksum_block with a given instruction set (which must be
 * available): for the tests and the benchmark. */
uint64_t xio_checksum_block_isa(xio_checksum_isa isa, const void *block, int64_t nrows,
                                int64_t ncols, size_t elem_size, uint64_t first_key,
                                uint64_t row_step, uint64_t col_step);

/* The first key of a block of the output B starting at B's (row, col),
 * where A is a stack of items, each in_item_rows x in_cols, and B the
 * stack of their transposes, the one of A's item `item` in B's rows
 * around `row` (at that item's place, or at another where h5_matrix.h's
 * lead order moves it): B(row + i, col + j) is A(item * in_item_rows + col
 * + j, row % in_cols + i); the steps are 1 and in_cols, within one item.
 * With one item, B(row + i, col + j) is A(col + j, row + i). */
static inline uint64_t xio_output_first_key(int64_t item, int64_t row, int64_t col, int64_t in_cols,
                                            int64_t in_item_rows) {
  if (in_cols == 0) return 0;
  return ((uint64_t)item * (uint64_t)in_item_rows + (uint64_t)col) * (uint64_t)in_cols +
         (uint64_t)(row % in_cols);
}

#endif
