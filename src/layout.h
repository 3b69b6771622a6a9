/* Where every byte of one distributed transpose goes, worked out once per
 * plan (like FFTW's sbs/sbo/rbs/rbo): execution only iterates it.
 *
 * Rank p owns input rows R_p and output rows C_p (= input columns C_p).
 * The block in[R_p, C_q] becomes out[C_q, R_p] on rank q.  The exchange
 * goes in chunks; chunk k of every block is a range of its columns, which
 * is a range of rows of the transposed block, so contiguous in both the
 * send and the receive buffer.  Sender and receiver cut the same columns:
 * chunk k of the receiver's output rows. */
#ifndef XPOSE_LAYOUT_H
#define XPOSE_LAYOUT_H

#include "exchange/exchange.h"

typedef struct {
  int64_t first, count;
} xpose_range;

/* A local transpose: dst (cols x rows, leading dimension ld_dst) = src
 * (rows x cols, ld_src)^T.  Leading dimensions in elements, offsets in bytes
 * from the buffers the step names. */
typedef struct {
  int64_t src_offset, ld_src, dst_offset, ld_dst, rows, cols;
} xpose_transpose_piece;

/* A placing copy: `rows` runs of row_bytes from the receive buffer into
 * out.  Offsets and pitches in bytes. */
typedef struct {
  int64_t src_offset, src_pitch, dst_offset, dst_pitch, rows, row_bytes;
} xpose_copy_piece;

typedef struct {
  xpose_exchange_layout exchange; /* what travels, in the send and receive buffers */
  xpose_transpose_piece *pack;    /* in -> send buffer, one per peer in ring order */
  xpose_transpose_piece own;      /* in -> out: the own block's share */
  xpose_copy_piece *place;        /* receive buffer -> out, one per peer in ring order */
  int npeers;                     /* entries of pack and place: the peers exchanged with */
} xpose_chunk_layout;

typedef struct {
  xpose_range in, out;            /* this rank's input rows and output rows */
  xpose_exchange_layout whole;    /* every chunk at once */
  int64_t send_bytes, recv_bytes; /* scratch the exchange needs */
  int nchunks;
  xpose_chunk_layout *chunks;
} xpose_layout;

/* The layout of rank `rank` of `nranks` for a rows x cols matrix of
 * elem_size-byte elements (sizes checked by the caller), its output rows
 * split in units of out_unit (xpose_unit_range), exchanged in
 * nchunks chunks.  Blocks to and from the ranks marked in `direct` (NULL:
 * none; it must be symmetric, as nodes are) are written straight into their
 * outputs by the engine and take no part in the exchange, the pieces or
 * the scratch.  On failure the layout is still safe to free. */
xpose_status xpose_layout_build(int rank, int nranks, int64_t rows, int64_t cols, size_t elem_size,
                                int64_t out_unit, int nchunks, const unsigned char *direct,
                                xpose_layout *layout);

void xpose_layout_free(xpose_layout *layout);

#endif
