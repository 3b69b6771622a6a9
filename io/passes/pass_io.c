/* Where the passes' I/O is chosen: the one place that knows both
 * implementations (pass_io.h). */
#include "pass_io.h"

#include <string.h>

#include "h5_one_writer.h"
#include "pass_plan.h"

static void close_raw(xio_pass_io *io) {
  xio_raw_close(&io->raw_in);
  xio_raw_close(&io->raw_out);
}

/* Collective.  1 where every rank can move both datasets raw (their files
 * open in io), 0 where not, -1 with a message.  Raw needs contiguous
 * datasets, every rank on one node (one page cache), and options not
 * asking for the collective path. */
static int open_raw_everywhere(const xio_transpose_options *options, xio_pass_io *io, int nranks,
                               xio_error *err) {
  int node_ranks = 0;
  MPI_Comm node = MPI_COMM_NULL;
  if (XIO_MPICHECK(MPI_Comm_split_type(io->in->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                   err) ||
      XIO_MPICHECK(MPI_Comm_size(node, &node_ranks), err) ||
      XIO_MPICHECK(MPI_Comm_free(&node), err))
    return -1;
  /* rechunking writes chunked outputs, and exchanges every pass */
  int usable = !options->collective_only && !io->in->shape.rechunk && node_ranks == nranks &&
               xio_pass_io_raw_open(io) == 0,
      all = 0;
  if (XIO_MPICHECK(MPI_Allreduce(&usable, &all, 1, MPI_INT, MPI_MIN, io->in->comm), err)) all = -1;
  if (all != 1) close_raw(io);
  return all;
}

int xio_pass_codec_writes(const xio_matrix *in, const xio_matrix *out,
                          const xio_transpose_options *options, int nranks) {
  int64_t along_rows = 1, along_cols = 1;
  xio_pass_output_units(in, out, &along_rows, &along_cols);
  const xio_progress *resumed = options->resume_from;
  return out->codec && (!resumed || xio_pass_grid_fits(&resumed->grid, in->elem_size, nranks,
                                                       along_cols, xio_transpose_budget(options)));
}

int xio_pass_plan_with_codec(const xio_matrix *in, const xio_matrix *out,
                             const xio_transpose_options *options, int nranks, int codec, int *raw,
                             xio_pass_grid *grid, int64_t *unit, xio_error *err) {
  int64_t along_rows = 1, along_cols = 1;
  xio_pass_output_units(in, out, &along_rows, &along_cols);
  *unit = 1;
  if (codec) { /* never raw: compressed chunks */
    /* Passes of a chunk's columns for every rank at least, where they fit
     * the budget, so that every rank has chunks to compress (a quarter of a
     * rechunked year's columns held 3 chunk-wide bands: 13 of 16 ranks
     * waited).  Each rank's columns in whole chunks take more memory than
     * an even share: where no aligned grid fits so, HDF5 writes, in the
     * grid the output's chunks were shaped for (xio_transpose_block's). */
    xio_transpose_options wide = *options;
    const int64_t rows = xio_item_rows(in), cols = (int64_t)nranks * along_cols;
    const uint64_t every_rank =
        xio_pass_bytes(along_rows < rows ? along_rows : rows, cols < in->cols ? cols : in->cols,
                       in->elem_size, nranks, along_cols);
    if (wide.pass_bytes_limit && wide.pass_bytes_limit < every_rank)
      wide.pass_bytes_limit = every_rank;
    if (xio_pass_plan_for_io(in, out, &wide, nranks, raw, along_cols, grid, err)) return -1;
    if (xio_pass_grid_aligned(grid, along_rows, along_cols)) {
      *unit = along_cols;
      return 0;
    }
  }
  return xio_pass_plan_for_io(in, out, options, nranks, raw, 1, grid, err);
}

int xio_pass_io_open(const xio_matrix *in, xio_matrix *out, const xio_transpose_options *options,
                     xio_pass_grid *grid, xio_pass_io *io, xio_error *err) {
  int nranks, rank;
  memset(io, 0, sizeof *io);
  io->in = in;
  io->out = out;
  io->unit = 1;
  io->raw_in.fd = io->raw_out.fd = io->behind_fd = -1;
  if (XIO_MPICHECK(MPI_Comm_size(in->comm, &nranks), err) ||
      XIO_MPICHECK(MPI_Comm_rank(in->comm, &rank), err))
    return -1;
  int raw = open_raw_everywhere(options, io, nranks, err);
  if (raw < 0) return -1;
  const int fits = !raw && xio_pass_codec_writes(in, out, options, nranks);
  const int codec = fits ? xio_one_writer_possible(out, err) : 0;
  if (codec < 0) return -1;
  int64_t unit = 1;
  const int rc = xio_agree(
      in->comm, xio_pass_plan_with_codec(in, out, options, nranks, codec, &raw, grid, &unit, err),
      err);
  if (rc || !raw) close_raw(io);
  if (rc) return -1;
  if (raw) {
    /* One sync, not one per rank walking the same dirty pages (16 GiB
     * on 4 H100 ranks: the last sync 11.7 s from every rank, 11.0 s from
     * one). */
    io->syncs = rank == 0;
    xio_pass_io_raw_start(io, options);
    return 0;
  }
  /* a Zarr array's chunks are files: only the codec writes them */
  int64_t along_rows = 1, along_cols = 1;
  xio_pass_output_units(in, out, &along_rows, &along_cols);
  const int whole = codec && xio_pass_grid_aligned(grid, along_rows, along_cols);
  if (out->files && !whole)
    return xio_fail(err,
                    "%s: a Zarr array's chunks are written whole, and no pass that gives every "
                    "rank whole chunks fits the budget: raise --memory",
                    out->dataset);
  if ((unit > 1 || out->files) && xio_pass_io_chunks_open(io, unit, err)) return -1;
  if (out->codec && unit == 1 && !out->files)
    io->codec_declined = codec  ? "no pass that gives every rank whole chunks fits the budget"
                         : fits ? "other objects of the output file are open"
                                : "its passes, resumed, do not fit the budget with whole chunks "
                                  "for every rank";
  const xio_pass_geometry largest =
      xio_pass_geometry_of(grid, &in->shape, 0, 0, nranks, 0, io->unit);
  xio_pass_io_collective_start(io, options, xio_pass_read_bytes(&largest, in->elem_size));
  return 0;
}
