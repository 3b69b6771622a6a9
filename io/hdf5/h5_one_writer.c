/* An output held by one writer (h5_one_writer.h). */
#include "h5_one_writer.h"

#include <stdio.h>
#include <string.h>

int xio_one_writer_possible(const xio_matrix *m, xio_error *err) {
  if (m->files) return 1; /* each rank writes its own chunk files */
  /* the file and its dataset: a file with other objects open fails to close */
  int alone =
      !m->one_writer && m->file >= 0 && m->dset >= 0 && H5Fget_obj_count(m->file, H5F_OBJ_ALL) == 2;
  if (XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, &alone, 1, MPI_INT, MPI_MIN, m->comm), err))
    return -1;
  return alone;
}

/* Local.  m's file opened by `name` over comm (RDWR), with m's dataset. */
static int open_file(xio_matrix *m, MPI_Comm comm, const char *name, xio_error *err) {
  hid_t fapl = xio_file_access(comm);
  int rc = fapl < 0 ? xio_fail_h5(err, "cannot set up MPI-IO file access") : 0;
  if (rc == 0 && (m->file = H5Fopen(name, H5F_ACC_RDWR, fapl)) < 0)
    rc = xio_fail_h5(err, "%s: cannot open it again", name);
  if (rc == 0 && (m->dset = H5Dopen2(m->file, m->dataset, H5P_DEFAULT)) < 0)
    rc = xio_fail_h5(err, "%s: cannot open %s again", name, m->dataset);
  xio_release(H5Pclose, &fapl, &rc, err);
  return rc;
}

/* Local.  m's dataset and file closed here, if open here. */
static int close_file(xio_matrix *m, xio_error *err) {
  int rc = 0;
  xio_release(H5Dclose, &m->dset, &rc, err);
  xio_release(H5Fclose, &m->file, &rc, err);
  return rc;
}

/* Local, after a failure every rank agreed on: m closed here (what a
 * failed close left open too), so that xio_close does nothing. */
static int closed(xio_matrix *m) {
  xio_error ignored;
  int rc = 0;
  (void)close_file(m, &ignored);
  xio_release(H5Tclose, &m->type, &rc, &ignored);
  xio_matrix_reset(m);
  return -1;
}

int xio_one_writer_begin(xio_matrix *m, char *name, xio_error *err) {
  int rank = 0;
  name[0] = '\0';
  if (m->files) return 0;
  const ssize_t n = H5Fget_name(m->file, name, 4096);
  int rc = n <= 0 || n >= 4096 ? xio_fail_h5(err, "cannot name the file of %s", m->dataset) : 0;
  if (XIO_MPICHECK(MPI_Comm_rank(m->comm, &rank), err) || xio_agree(m->comm, rc, err)) return -1;
  rc = close_file(m, err); /* collective: metadata flushed by every rank */
  if (xio_agree(m->comm, rc, err)) return closed(m);
  m->one_writer = 1;
  rc = rank == 0 ? open_file(m, MPI_COMM_SELF, name, err) : 0;
  return xio_agree(m->comm, rc, err) ? closed(m) : 0;
}

int xio_one_writer_end(xio_matrix *m, const char *name, xio_error *err) {
  if (m->files) return 0;
  int rc = close_file(m, err); /* rank 0's: the others hold nothing */
  m->one_writer = 0;
  if (xio_agree(m->comm, rc, err)) return closed(m);
  rc = open_file(m, m->comm, name, err);
  return xio_agree(m->comm, rc, err) ? closed(m) : 0;
}
