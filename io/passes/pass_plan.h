/* The grid of passes a transpose runs (passes.h), planned for the I/O that
 * moves them (pass_io.h): raw passes come in whole-row bands where they can,
 * every pass starts and ends on whole chunks of compressed datasets, and a
 * resumed run takes its record's grid. */
#ifndef XIO_PASS_PLAN_H
#define XIO_PASS_PLAN_H

#include "h5_matrix.h"
#include "transpose_options.h"

/* Local (every rank computes the same).  The grid for in -> out on nranks
 * ranks, for raw I/O or not, each pass's columns shared among the ranks
 * in units of share_unit (xpose_config.output_row_unit): options->
 * resume_from's, checked against this run, or one planned for options'
 * budget.  0, or -1 with a message. */
int xio_pass_plan(const xio_matrix *in, const xio_matrix *out, const xio_transpose_options *options,
                  int nranks, int raw, int64_t share_unit, xio_pass_grid *grid, xio_error *err);

/* Local.  The grid xio_transpose moves in -> out in: planned for raw I/O
 * where *raw says both can be moved so, unless its passes' shares are
 * too small for raw requests to pay (XIO_RAW_MIN_SHARE_BYTES): then
 * planned for the collective path, *raw set to 0. */
int xio_pass_plan_for_io(const xio_matrix *in, const xio_matrix *out,
                         const xio_transpose_options *options, int nranks, int *raw,
                         int64_t share_unit, xio_pass_grid *grid, xio_error *err);

/* Local.  The output's chunk units (h5_matrix.h) along the input's rows
 * and along its columns: a grid aligned with them (xio_pass_grid_aligned)
 * writes each of out's chunks whole, in one pass. */
void xio_pass_output_units(const xio_matrix *in, const xio_matrix *out, int64_t *along_rows,
                           int64_t *along_cols);

/* Passes under this many bytes per rank move in runs too short for raw
 * requests to pay: MPI-IO's collective buffering gathers them. */
#define XIO_RAW_MIN_SHARE_BYTES ((uint64_t)1 << 20)

/* Bytes of the largest part of a pass any rank moves raw (rank 0's of the
 * first). */
uint64_t xio_pass_raw_share(const xio_pass_grid *grid, const xio_matrix *in, int nranks);

/* The budget the passes must fit per rank: the host's, or with the CUDA
 * backend the GPU's (which holds the plan's scratch too). */
uint64_t xio_transpose_budget(const xio_transpose_options *options);

/* Local.  The block of the output's matrix (its rows are in's columns)
 * that each pass of xio_transpose covers on `ranks` ranks, the passes
 * aligned with in's compressed chunks, so that each of them is read once:
 * where the output's chunks are chosen to fit in it, each of them is
 * written whole, by one pass, and xio_transpose's plan keeps that block.
 * `compressed`: the output will be (its passes are smaller).  0 x 0 when
 * no pass fits. */
void xio_transpose_block(const xio_matrix *in, const xio_transpose_options *options, int ranks,
                         int compressed, int64_t *out_rows, int64_t *out_cols);

#endif
