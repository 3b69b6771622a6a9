/* Proof that one dataset is the transpose of another, by reading them
 * back: both (xpose --verify, xpose verify), or the output alone against
 * the checksums of what was written (every run). */
#ifndef XIO_VERIFY_H
#define XIO_VERIFY_H

#include "h5_matrix.h"
#include "h5_transpose.h"

/* Collective.  The position-keyed checksum (checksum.h) of all of m, read
 * raw where it can be (raw_dataset.h: each rank a contiguous share of the
 * elements, in several sequential streams, from any node), else by
 * chunks, or by contiguous row slabs or blocks of whole chunks, within
 * memory_budget bytes per rank.  With
 * transposed_from (NULL: keys of m's own positions), m is an output B =
 * A^T, A shaped and folded so, and its elements carry their keys in A.
 * Calls stop_requested() (when not NULL) between slabs; a stop agreed by
 * any rank returns 1 with no sum. */
int xio_checksum_matrix(const xio_matrix *m, const xio_shape *transposed_from,
                        uint64_t memory_budget, int (*stop_requested)(void), uint64_t *sum,
                        xio_error *err);

/* Collective.  The checksum of m's values (whatever its fold), each keyed
 * by its row-major position in m, or with `source` by the position it came
 * from in a dataset whose axis source[i] became m's axis i.  Read as
 * xio_checksum_matrix reads, stopping as it does. */
int xio_checksum_values(const xio_matrix *m, const int *source, uint64_t memory_budget,
                        int (*stop_requested)(void), uint64_t *sum, xio_error *err);

/* Collective.  The checksum of what the first done->passes_done passes
 * (xio_pass_order) of done->grid wrote into `out` (the transpose of a
 * dataset shaped and folded as `in`), read back from storage:
 * a resumed partial holds what its record says only when this equals
 * done->sums.written.  Each rank reads its share of each pass's output
 * block, which the pass buffers of that grid held.  Stops as
 * xio_checksum_matrix does. */
int xio_checksum_passes(const xio_matrix *out, const xio_shape *in, const xio_progress *done,
                        int (*stop_requested)(void), uint64_t *sum, xio_error *err);

/* Collective.  Reads the whole of `in` and of `out` and compares their
 * checksums; shapes and datatypes are compared exactly.  *match is set on
 * every rank; returns -1 only when reading fails. */
int xio_verify_transpose(const xio_matrix *in, const xio_matrix *out, uint64_t memory_budget,
                         int *match, char *detail, size_t detail_size, xio_error *err);

/* Collective.  As xio_verify_transpose, for `out` holding in's values with
 * its axes in any order: axis i of out is in's axis source[i]. */
int xio_verify_permutation(const xio_matrix *in, const xio_matrix *out, const int *source,
                           uint64_t memory_budget, int *match, char *detail, size_t detail_size,
                           xio_error *err);

#endif
