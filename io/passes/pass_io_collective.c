#define _GNU_SOURCE /* sync_file_range */
/* The passes' collective I/O (pass_io.h): through HDF5's collective
 * MPI-IO, the read and then the write on one I/O thread, so that one HDF5
 * call runs at a time; a compressed output's writes through the chunk
 * codec where it can (chunk_writer.h), on a thread of their own where the
 * codec reads the input too (no HDF5 in the reads: each pass's reads wait
 * for the disk while the last pass's chunks are compressed, on the same
 * pool).  Its collectives run on the matrices' comm (and HDF5's own
 * duplicate, and the writer's), the pass loop's on a duplicate of it, so
 * that no two threads interleave collectives on one communicator. */
#include "pass_io.h"

#include <fcntl.h>
#include <unistd.h>

#include "chunk_writer.h"
#include "h5_one_writer.h"

/* One transfer; a failure's message in its err. */
static int collective_transfer(xio_pass_io *io, int writing) {
  xio_pass_transfer *t = writing ? &io->write : &io->read;
  const xio_pass_geometry *p = t->request.pass;
  t->began = MPI_Wtime();
  t->rc = !writing ? xio_read_block(io->in, p->read_row, p->read_rows, p->read_col, p->read_cols,
                                    t->request.buf, &t->err)
          : io->writer
              ? xio_chunk_writer_write(io->writer, io->out->dset, p->write_row, p->write_rows,
                                       p->write_col, p->write_cols, t->request.buf, &t->err)
              : xio_write_block(io->out, p->write_row, p->write_rows, p->write_col, p->write_cols,
                                t->request.buf, &t->err);
  t->ended = MPI_Wtime();
  t->seconds += t->ended - t->began;
  return t->rc;
}

static int read_job(void *arg) {
  xio_pass_io *io = arg;
  const int rc = collective_transfer(io, 0);
  const xio_pass_geometry *next = io->read.request.next;
  if (rc == 0 && next) /* its chunks come in beside this step's write and transpose */
    xio_read_ahead(io->in, next->read_row, next->read_rows, next->read_col, next->read_cols);
  return rc;
}

static int write_job(void *arg) {
  xio_pass_io *io = arg;
  const int rc = collective_transfer(io, 1);
  /* The pass's chunks on their way to storage now, not all at the last
   * checkpoint's sync (the hourly year's 624 MB: 0.26 s there). */
  if (rc == 0 && io->behind_fd >= 0)
    (void)sync_file_range(io->behind_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  return rc;
}

/* Both on one thread: a failed read fails on every rank (xio_read_block
 * agrees), so every rank leaves out the collective write. */
static int read_then_write(void *arg) {
  xio_pass_io *io = arg;
  const int rc = io->read.request.pass ? read_job(io) : 0;
  return rc == 0 && io->write.request.pass ? write_job(io) : rc;
}

static double overlap(double a0, double a1, double b0, double b1) {
  const double both = (a1 < b1 ? a1 : b1) - (a0 > b0 ? a0 : b0);
  return both > 0 ? both : 0;
}

static void collective_post(xio_pass_io *io, xio_pass_request read, xio_pass_request write) {
  io->read.request = read;
  io->write.request = write;
  io->read.rc = io->write.rc = 0;
  /* the same on every rank: the input's reads, and the threads */
  io->apart = read.pass && write.pass && io->threads[1].threaded && xio_reads_alone(io->in);
  if (!io->apart) {
    xio_io_thread_post(&io->threads[0], read_then_write, io);
    return;
  }
  xio_io_thread_post(&io->threads[0], read_job, io);
  xio_io_thread_post(&io->threads[1], write_job, io);
}

static int collective_wait(xio_pass_io *io, xio_error *err) {
  (void)xio_io_thread_wait(&io->threads[0]);
  if (io->apart) {
    (void)xio_io_thread_wait(&io->threads[1]);
    io->both_seconds += overlap(io->read.began, io->read.ended, io->write.began, io->write.ended);
  }
  if (io->read.rc == 0 && io->write.rc == 0) return 0;
  *err = io->read.rc ? io->read.err : io->write.err;
  return -1;
}

/* Collective where the codec wrote: the output back to every rank. */
static int collective_close(xio_pass_io *io, xio_error *err) {
  xio_io_thread_stop(&io->threads[0]);
  xio_io_thread_stop(&io->threads[1]);
  if (io->behind_fd >= 0) (void)close(io->behind_fd); /* only started writes */
  io->behind_fd = -1;
  if (!io->writer) return 0;
  xio_chunk_writer_close(io->writer);
  io->writer = NULL;
  return xio_one_writer_end(io->out, io->held_name, err);
}

static const xio_pass_io_ops collective_ops = {collective_post, collective_wait, NULL,
                                               collective_close};

int xio_pass_io_chunks_open(xio_pass_io *io, int64_t unit, xio_error *err) {
  const xio_matrix *out = io->out;
  const xio_chunked_dataset d = {out->comm,      out->dset,    out->type, &out->shape,
                                 out->elem_size, out->dataset, out->files};
  if (xio_chunk_writer_open(&d, &io->writer, err)) return -1;
  if (xio_one_writer_begin(io->out, io->held_name, err)) {
    xio_chunk_writer_close(io->writer);
    io->writer = NULL;
    return -1;
  }
  int rank = 0;
  (void)MPI_Comm_rank(out->comm, &rank);
  if (rank == 0 && !out->files) io->behind_fd = open(io->held_name, O_RDONLY | O_CLOEXEC);
  io->unit = unit;
  return 0;
}

/* Passes of tiny blocks (under 1 MiB per rank) are all synchronisation:
 * there an I/O thread only competes with the exchange for the cores and
 * for MPI's progress engine (3 ranks on 2 cores, 27 x 27 blocks: 10.3 s
 * with it, 5.5 s without). */
#define THREAD_MIN_BYTES ((uint64_t)1 << 20)

void xio_pass_io_collective_start(xio_pass_io *io, const xio_transpose_options *options,
                                  uint64_t largest_read) {
  io->ops = &collective_ops;
  io->local = io->sums = 0;
  xio_io_thread_inline(&io->threads[0]);
  xio_io_thread_inline(&io->threads[1]);
  if (!options->inline_io && largest_read >= THREAD_MIN_BYTES) {
    xio_io_thread_start(&io->threads[0], 1);
    if (io->writer && io->threads[0].threaded) xio_io_thread_start(&io->threads[1], 1);
  }
  io->overlapped = io->threads[0].threaded;
  io->name = io->writer
                 ? io->threads[1].threaded
                       ? "reads on an I/O thread (chunks inflated on every rank's threads where "
                         "xpose's codec reads them); chunks compressed on every rank's threads, "
                         "written as stored by rank 0, on another"
                   : io->overlapped
                       ? "HDF5's collective MPI-IO reads on the I/O thread; chunks "
                         "compressed on every rank's threads, written as stored by rank 0"
                       : "HDF5's collective MPI-IO reads; chunks compressed on every "
                         "rank's threads, written as stored by rank 0"
             : io->overlapped ? "HDF5's collective MPI-IO on the I/O thread"
                              : "HDF5's collective MPI-IO";
  if (io->writer && io->out->files) /* a Zarr array's */
    io->name =
        "reads through HDF5 (or xpose's codec); chunks compressed on every rank's "
        "threads, each written by its rank as a file of its own";
}
