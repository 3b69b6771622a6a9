/* Proof that one dataset is the transpose of another, by re-reading both. */
#ifndef XIO_VERIFY_H
#define XIO_VERIFY_H

#include "h5_matrix.h"

/* Collective.  Reads the whole of `in` and of `out`, each by contiguous row
 * slabs within memory_budget bytes per rank, and compares position-keyed
 * checksums: the sum (mod 2^64) over all elements of XXH3-64 of the
 * element's bytes seeded with its input position i * cols + j.  Any element
 * that is missing, changed or misplaced changes the sum (a false match has
 * probability about 2^-64).  Shapes and datatypes are compared exactly.
 * *match is set on every rank; returns -1 only when reading fails. */
int xio_verify_transpose(const xio_matrix *in, const xio_matrix *out, uint64_t memory_budget,
                         int *match, char *detail, size_t detail_size, xio_error *err);

#endif
