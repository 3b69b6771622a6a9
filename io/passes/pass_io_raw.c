/* The passes' raw I/O (pass_io.h): reads on one thread, writes on another,
 * both at once, each summing the bytes it moves where asked. */
#include "pass_io.h"

#include "checksum.h"

static int end(xio_pass_transfer *t, int rc) {
  t->ended = MPI_Wtime();
  t->seconds += t->ended - t->began;
  return rc;
}

/* A block from the input's source (inputs joined), whose reads call no
 * HDF5 (xio_reads_alone), summed as the raw reads sum theirs. */
static int source_read(xio_pass_io *io, const xio_pass_geometry *p, void *buf,
                       const xio_block_sum *keys, xio_error *err) {
  const xio_matrix *in = io->in;
  if (p->read_rows <= 0 || p->read_cols <= 0) return 0;
  if (in->source->read(in->source->state, in, p->read_row, p->read_rows, p->read_col, p->read_cols,
                       buf, err))
    return -1;
  if (keys->sum)
    *keys->sum += xio_checksum_block(buf, p->read_rows, p->read_cols, in->elem_size,
                                     keys->first_key, keys->row_step, keys->col_step);
  return 0;
}

static int raw_read(void *arg) {
  xio_pass_io *io = arg;
  xio_pass_transfer *t = &io->read;
  const xio_pass_geometry *p = t->request.pass;
  const xio_block_sum keys = xio_pass_input_keys(p, io->in->cols, t->request.sum);
  if (io->in->source) return end(t, source_read(io, p, t->request.buf, &keys, &t->err));
  /* Where it reads its rows of a block, not whole rows: asked for ahead,
   * they ran 1.3x as fast (2-core VM, 2 ranks, a budget 64 times smaller
   * than the data) and 1.1x (H100 machine, one GPU rank, the same); where
   * ranks read their columns of a band, read-ahead joins their runs, and
   * asking ahead broke that (16 host ranks: the reader 13.4 s -> 30.5 s). */
  if (p->read_cols == p->ncols)
    xio_raw_will_read(&io->raw_in, p->read_row, p->read_rows, p->read_col, p->read_cols);
  return end(t, xio_raw_read(&io->raw_in, p->read_row, p->read_rows, p->read_col, p->read_cols,
                             t->request.buf, t->request.sum ? &keys : NULL, &t->err));
}

static int raw_write(void *arg) {
  xio_pass_io *io = arg;
  xio_pass_transfer *t = &io->write;
  const xio_pass_geometry *p = t->request.pass;
  const xio_block_sum keys =
      xio_pass_output_keys(p, io->in->cols, xio_item_rows(io->in), t->request.sum);
  return end(t,
             xio_raw_write(&io->raw_out, p->write_row, p->write_rows, p->write_col, p->write_cols,
                           t->request.buf, t->request.sum ? &keys : NULL, &t->err));
}

static double overlap(double a0, double a1, double b0, double b1) {
  const double both = (a1 < b1 ? a1 : b1) - (a0 > b0 ? a0 : b0);
  return both > 0 ? both : 0;
}

/* The write posted the step before ended: its time beside this read. */
static void end_write(xio_pass_io *io) {
  xio_pass_transfer *w = &io->write;
  if (!io->writing) return;
  w->rc = xio_io_thread_wait(&io->threads[1]);
  io->writing = 0;
  if (io->read.request.pass)
    io->both_seconds += overlap(io->read.began, w->ended, w->began, w->ended);
}

/* The read first, so that it never waits for the write before. */
static void raw_post(xio_pass_io *io, xio_pass_request read, xio_pass_request write) {
  io->read.request = read;
  io->read.began = MPI_Wtime();
  if (read.pass) xio_io_thread_post(&io->threads[0], raw_read, io);
  end_write(io);
  if (!write.pass || io->write.rc) return; /* a failed write fails the step */
  io->write.request = write;
  io->write.began = MPI_Wtime();
  io->writing = 1;
  xio_io_thread_post(&io->threads[1], raw_write, io);
}

static int raw_wait(xio_pass_io *io, xio_error *err) {
  xio_pass_transfer *r = &io->read, *w = &io->write;
  r->rc = r->request.pass ? xio_io_thread_wait(&io->threads[0]) : 0;
  if (r->request.pass && io->writing) /* the write still running, or ended */
    io->both_seconds += overlap(r->began, r->ended, w->began,
                                xio_io_thread_busy(&io->threads[1]) ? r->ended : w->ended);
  if (r->rc == 0 && w->rc == 0) return 0;
  *err = r->rc ? r->err : w->err;
  return -1;
}

/* The ranks share one page cache: one rank's sync makes every rank's
 * writes durable (checkpoints.c syncs once all ranks have written). */
static int raw_sync(xio_pass_io *io, xio_error *err) {
  return io->syncs ? xio_raw_sync(&io->raw_out, err) : 0;
}

static int raw_close(xio_pass_io *io, xio_error *err) {
  (void)err;
  if (io->writing) (void)xio_io_thread_wait(&io->threads[1]); /* the run's outcome is decided */
  io->writing = 0;
  xio_io_thread_stop(&io->threads[0]);
  xio_io_thread_stop(&io->threads[1]);
  xio_raw_close(&io->raw_in);
  xio_raw_close(&io->raw_out);
  return 0;
}

static const xio_pass_io_ops raw_ops = {raw_post, raw_wait, raw_sync, raw_close};

int xio_pass_io_raw_open(xio_pass_io *io) {
  uint64_t in_base = 0, out_base = 0;
  xio_error ignored; /* the collective path reports what is wrong, if anything */
  /* an input read from elsewhere, with no HDF5 call, is read so too */
  const int from_source = io->in->source && xio_reads_alone(io->in);
  if ((!from_source && !xio_raw_usable(io->in, &in_base)) || !xio_raw_usable(io->out, &out_base))
    return -1;
  if ((from_source || xio_raw_open(io->in, in_base, 0, &io->raw_in, &ignored) == 0) &&
      xio_raw_open(io->out, out_base, 1, &io->raw_out, &ignored) == 0)
    return 0;
  xio_raw_close(&io->raw_in);
  xio_raw_close(&io->raw_out);
  return -1;
}

void xio_pass_io_raw_start(xio_pass_io *io, const xio_transpose_options *options) {
  io->ops = &raw_ops;
  io->local = io->sums = 1;
  xio_io_thread_inline(&io->threads[0]);
  xio_io_thread_inline(&io->threads[1]);
  if (!options->inline_io) { /* neither calls MPI nor HDF5 */
    xio_io_thread_start(&io->threads[0], 0);
    xio_io_thread_start(&io->threads[1], 0);
  }
  io->overlapped = io->threads[0].threaded && io->threads[1].threaded;
  io->name = io->overlapped ? "raw I/O at the datasets' file offsets, a thread each"
                            : "raw I/O at the datasets' file offsets";
}
