#include "h5_matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chunk_reader.h"
#include "chunk_writer.h"
#include "filters.h"
#include "h5_compat.h"
#include "h5_types.h"
#include "mpi_hints.h"
#include "mpi_io_name.h"
#include "netcdf3.h"

void xio_matrix_init(xio_matrix *m, MPI_Comm comm) {
  /* comm == MPI_COMM_NULL marks a matrix that was never opened */
  memset(m, 0, sizeof *m);
  m->comm = comm;
  m->file = m->dset = m->type = H5I_INVALID_HID;
}

/* Metadata is read by one rank and broadcast, and written collectively,
 * which every rank here does in the same order anyway. */
hid_t xio_file_access(MPI_Comm comm) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return fapl;
  if (H5Pset_fapl_mpio(fapl, comm, xio_mpi_hints()) < 0 ||
      H5Pset_all_coll_metadata_ops(fapl, 1) < 0 || H5Pset_coll_metadata_write(fapl, 1) < 0) {
    (void)H5Pclose(fapl); /* failing already: the caller reports HDF5's first error */
    return H5I_INVALID_HID;
  }
  return fapl;
}

void xio_matrix_reset(xio_matrix *m) { xio_matrix_init(m, MPI_COMM_NULL); }

/* ---- folding N axes into a matrix ---- */

/* A run of a group's flattened positions starting and ending on multiples
 * of this covers whole chunks: whole extents of the group's inner axes
 * (which their chunks tile, edges included), and of its first axis a
 * multiple of that axis's chunk. */
static int64_t chunk_unit(const xio_matrix *m, int a, int b) {
  return a < b ? m->chunk_dims[a] * xio_dims_product(m->shape.dims, a + 1, b) : 1;
}

int xio_matrix_fold(xio_matrix *m, int lead, int split, int trail, xio_error *err) {
  const xio_shape *s = &m->shape;
  if (!(0 <= lead && lead < split && split < trail && trail <= s->ndims))
    return xio_fail(err, "%s: cannot fold %d axes at %d, %d, %d", m->dataset, s->ndims, lead, split,
                    trail);
  const int64_t rows = xio_dims_product(s->dims, 0, split),
                cols = xio_dims_product(s->dims, split, trail),
                inside = xio_dims_product(s->dims, trail, s->ndims);
  if (rows < 0 || cols < 0 || inside < 0 ||
      (inside > 0 && (uint64_t)inside > SIZE_MAX / m->type_size) ||
      (rows > 0 && cols > 0 && inside > 0 &&
       (cols > INT64_MAX / rows || rows * cols > INT64_MAX / inside / (int64_t)m->type_size)))
    return xio_fail(err, "%s has more elements than 64-bit sizes count", m->dataset);
  unsigned seen = 0; /* the lead order: each leading axis once */
  for (int i = 0; s->lead_reordered && i < s->ndims; i++) {
    const int from = s->lead_order[i];
    if (i < lead ? from < 0 || from >= lead || (seen >> from & 1u) : from != 0)
      return xio_fail(err, "%s: the order of its %d leading axes is not one of them", m->dataset,
                      lead);
    if (i < lead) seen |= 1u << from;
  }
  m->shape.lead = lead;
  m->shape.split = split;
  m->shape.trail = trail;
  /* An empty axis inside the elements empties the matrix, not its elements;
   * an empty matrix is one empty item. */
  m->rows = inside ? rows : 0;
  m->cols = inside ? cols : 0;
  m->items = m->rows && m->cols ? xio_dims_product(s->dims, 0, lead) : 1;
  m->elem_size = (size_t)(inside ? inside : 1) * m->type_size;
  if (m->chunked) {
    m->chunk_rows = chunk_unit(m, lead, split);
    m->chunk_cols = chunk_unit(m, split, trail);
  }
  return 0;
}

int xio_matrix_transposes(const xio_matrix *out, const xio_matrix *in) {
  if (in->rows * in->cols == 0) return out->rows * out->cols == 0;
  if (in->shape.rechunk)
    return out->items == in->items && out->rows == in->rows && out->cols == in->cols &&
           out->elem_size == in->elem_size;
  return out->items == in->items && xio_item_rows(out) == in->cols &&
         out->cols == xio_item_rows(in) && out->elem_size == in->elem_size;
}

static void shape_text(const xio_shape *shape, char *text, size_t size) {
  size_t used = 0;
  text[0] = '\0';
  for (int i = 0; i < shape->ndims && used < size; i++)
    used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? " x " : "",
                             (long long)shape->dims[i]);
}

int xio_matrix_fold_as_transpose(xio_matrix *out, const xio_matrix *in, xio_error *err) {
  const xio_shape want = xio_shape_transposed(&in->shape);
  if (!xio_shape_same_dims(&out->shape, &want)) {
    char have_text[256], want_text[256];
    shape_text(&out->shape, have_text, sizeof have_text);
    shape_text(&want, want_text, sizeof want_text);
    return xio_fail(err, "%s is %s, where the transpose of %s is %s", out->dataset, have_text,
                    in->dataset, want_text);
  }
  return xio_matrix_fold(out, want.lead, want.split, want.trail, err);
}

int xio_split_path(const char *arg, char *file_out, size_t file_size, char *dataset_out,
                   size_t dataset_size) {
  const char *sep = strstr(arg, ":/");
  struct stat st;
  if (!sep && strchr(arg, ':') && stat(arg, &st) != 0) sep = strrchr(arg, ':');
  if (sep && sep[1] == '\0') sep = NULL; /* "file.h5:" names the file */
  const size_t file_len = sep ? (size_t)(sep - arg) : strlen(arg);
  if (file_len == 0 || file_len >= file_size) return -1;
  memcpy(file_out, arg, file_len);
  file_out[file_len] = '\0';
  const char *dataset = sep ? sep + 1 : "";
  const char *slash = dataset[0] && dataset[0] != '/' ? "/" : "";
  if (strlen(slash) + strlen(dataset) >= dataset_size) return -1;
  snprintf(dataset_out, dataset_size, "%s%s", slash, dataset);
  return 0;
}

/* ---- opening ---- */

/* The layout, chunk shape and filters of m, from its creation properties. */
int xio_matrix_take_storage(xio_matrix *m, hid_t dcpl, const char *path, xio_error *err) {
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  if (layout == H5D_LAYOUT_ERROR)
    return xio_fail_h5(err, "%s:%s: cannot read its layout", path, m->dataset);
  m->chunked = layout == H5D_CHUNKED;
  hsize_t chunk[XIO_MAX_DIMS] = {0};
  if (m->chunked && H5Pget_chunk(dcpl, XIO_MAX_DIMS, chunk) != m->shape.ndims)
    return xio_fail_h5(err, "%s:%s: cannot read its chunk shape", path, m->dataset);
  for (int i = 0; i < m->shape.ndims; i++) m->chunk_dims[i] = (int64_t)chunk[i];
  const int filters = m->chunked ? H5Pget_nfilters(dcpl) : 0;
  if (filters < 0) return xio_fail_h5(err, "%s:%s: cannot read its filters", path, m->dataset);
  m->filtered = filters > 0;
  m->codec =
      m->filtered && xio_chunk_writer_usable(dcpl, m->type_size, m->codec_why, sizeof m->codec_why);
  xio_filters f;
  if (m->codec && xio_filters_of(dcpl, &f) == 0) {
    size_t chunk_bytes = m->type_size;
    for (int i = 0; i < m->shape.ndims; i++) chunk_bytes *= (size_t)chunk[i];
    m->codec_work =
        xio_chunk_encode_work(&f, xio_filters_shuffle_first(&f, m->type_size), chunk_bytes);
  }
  return 0;
}

/* Local.  Fails where a contiguous dataset's data runs past the end of
 * its file: a truncated file whose superblock was patched to match (HDF5
 * refuses to open one whose superblock says it is longer).  Serial HDF5
 * refuses such a read ("addr overflow"), as it does for chunks; its
 * collective MPI-IO reads of contiguous data return zeros for the rest. */
int xio_check_stored_in_file(hid_t file, hid_t dset, const char *shown, const char *dataset,
                             xio_error *err) {
  const haddr_t offset = H5Dget_offset(dset); /* undefined: compact, external, chunked, none */
  if (offset == HADDR_UNDEF) return 0;
  const uint64_t end = (uint64_t)offset + (uint64_t)H5Dget_storage_size(dset);
  char path[4096];
  struct stat st;
  const ssize_t length = H5Fget_name(file, path, sizeof path);
  if (length <= 0 || (size_t)length >= sizeof path || stat(path, &st) != 0)
    return xio_fail(err, "%s: cannot read the size of the file", shown);
  if (end <= (uint64_t)st.st_size) return 0;
  return xio_fail(err,
                  "%s:%s: its data ends at byte %llu, past the end of the file (%llu bytes): "
                  "the file is truncated or damaged",
                  shown, dataset, (unsigned long long)end, (unsigned long long)st.st_size);
}

static int describe_dataset(xio_matrix *m, const char *path, xio_error *err) {
  hid_t space = H5Dget_space(m->dset);
  if (space < 0) return xio_fail_h5(err, "%s:%s: cannot read its shape", path, m->dataset);
  const int ndims = H5Sget_simple_extent_ndims(space);
  hsize_t dims[H5S_MAX_RANK] = {0}, maxdims[H5S_MAX_RANK] = {0};
  int rc = ndims < 0 || (ndims > 0 && H5Sget_simple_extent_dims(space, dims, maxdims) < 0)
               ? xio_fail_h5(err, "%s:%s: cannot read its shape", path, m->dataset)
               : 0;
  xio_release(H5Sclose, &space, &rc, err);
  if (rc) return -1;
  if (ndims == 1)
    return xio_fail(err, "%s:%s is 1-D (%llu): it has no axes to exchange", path, m->dataset,
                    (unsigned long long)dims[0]);
  if (ndims < 1)
    return xio_fail(err, "%s:%s is a scalar or empty dataspace, not a matrix or N-D array", path,
                    m->dataset);
  m->shape.ndims = ndims;
  for (int i = 0; i < ndims; i++) {
    m->shape.dims[i] = (int64_t)dims[i];
    if (maxdims[i] == H5S_UNLIMITED) m->shape.unlimited |= 1u << i;
  }
  hid_t stored = H5Dget_type(m->dset);
  if (stored < 0) return xio_fail_h5(err, "%s:%s: cannot read its datatype", path, m->dataset);
  m->type = H5Tcopy(stored); /* transient, even when the stored type is committed */
  if (m->type < 0) rc = xio_fail_h5(err, "%s:%s: cannot copy its datatype", path, m->dataset);
  xio_release(H5Tclose, &stored, &rc, err);
  if (rc) return -1;
  char why[128];
  if (xio_type_check_fixed(m->type, why, sizeof why) != 0)
    return xio_fail(err, "%s:%s holds %s; xpose moves fixed-size elements only", path, m->dataset,
                    why);
  m->type_size = H5Tget_size(m->type);
  if (m->type_size == 0) return xio_fail(err, "%s:%s has 0-byte elements", path, m->dataset);
  hid_t dcpl = H5Dget_create_plist(m->dset);
  rc = dcpl < 0 ? xio_fail_h5(err, "%s:%s: cannot read its layout", path, m->dataset)
                : xio_matrix_take_storage(m, dcpl, path, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  /* Read-only: a file being written reaches its end of allocation only
   * when HDF5 flushes it (without fallocate, an output dataset allocated
   * early lies past the file's end until then). */
  unsigned intent = 0;
  const int read_only = H5Fget_intent(m->file, &intent) >= 0 && !(intent & H5F_ACC_RDWR);
  if (rc == 0 && read_only) rc = xio_check_stored_in_file(m->file, m->dset, path, m->dataset, err);
  if (rc == 0 && read_only && m->filtered) m->chunk_index = xio_chunk_index_new(); /* or none */
  return rc ? -1 : xio_matrix_fold(m, 0, 1, ndims == 2 ? 2 : ndims, err);
}

typedef struct {
  const char *path, *shown;
} named_file;

/* A stopped run's file: chunks it wrote after its last flush can lie past
 * the end of allocation its superblock holds, while the chunk index,
 * written out by the metadata cache meanwhile, already points at them.
 * HDF5 would rewrite such a chunk in place beyond that end and refuse
 * ("addr overflow": 2 of 750 resumes of a compressed output killed
 * mid-run; in the one kept, two chunks of the index lay past that end,
 * and it resumed exactly with this), or allocate new space over it.  So
 * rank 0 first opens the file alone and sets its end of allocation to its
 * real end, which the superblock keeps: with HDF5's default driver
 * (H5Fincrement_filesize refuses MPI-IO's), without its file lock (which
 * MPI-IO opens do not take either, and some parallel file systems refuse;
 * xpose's own lock guards the output). */
static int allocate_to_end(void *arg, xio_error *err) {
  const named_file *f = arg;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file = H5I_INVALID_HID;
  int rc = fapl < 0 || H5Pset_file_locking(fapl, 0, 1) < 0
               ? xio_fail_h5(err, "cannot set up file access to %s", f->shown)
               : 0;
  if (rc == 0 && (file = H5Fopen(f->path, H5F_ACC_RDWR, fapl)) < 0)
    rc = xio_fail_h5(err, "%s: cannot open as an HDF5 file", f->shown);
  if (rc == 0 && H5Fincrement_filesize(file, 0) < 0)
    rc = xio_fail_h5(err, "%s: cannot set its end of allocation to its end", f->shown);
  xio_release(H5Pclose, &fapl, &rc, err);
  xio_release(H5Fclose, &file, &rc, err);
  return rc;
}

/* `path` is opened; `shown` names it in messages (the user's name for a
 * file written under a temporary one). */
static int open_dataset(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                        unsigned flags, xio_matrix *m, xio_error *err) {
  xio_matrix_init(m, comm);
  named_file file = {path, shown};
  if ((flags & H5F_ACC_RDWR) && xio_on_root(comm, allocate_to_end, &file, err)) return -1;
  int rc = 0;
  /* one rank alone reads through HDF5's POSIX driver: no MPI-IO to set up */
  const int alone = comm == MPI_COMM_SELF && !(flags & H5F_ACC_RDWR);
  hid_t fapl = alone ? H5Pcreate(H5P_FILE_ACCESS) : xio_file_access(comm);
  if (fapl < 0) rc = xio_fail_h5(err, "cannot set up MPI-IO file access");
  char name[4096];
  if (rc == 0 && alone) snprintf(name, sizeof name, "%s", path);
  if (rc == 0 && !alone) rc = xio_mpi_io_name(comm, path, shown, name, sizeof name, err);
  if (rc == 0) {
    m->file = H5Fopen(name, flags, fapl);
    if (m->file < 0) rc = xio_fail_h5(err, "%s: cannot open as an HDF5 file", shown);
  }
  xio_release(H5Pclose, &fapl, &rc, err);
  if (xio_agree(comm, rc, err)) return -1;

  snprintf(m->dataset, sizeof m->dataset, "%s", dataset);
  /* H5Lexists fails (< 0) when an intermediate group is missing. */
  if (H5Lexists(m->file, m->dataset, H5P_DEFAULT) <= 0)
    rc = xio_fail(err, "%s has no dataset %s", shown, m->dataset);
  if (rc == 0) {
    m->dset = H5Dopen2(m->file, m->dataset, H5P_DEFAULT);
    if (m->dset < 0) rc = xio_fail_h5(err, "%s:%s is not a dataset", shown, m->dataset);
  }
  if (rc == 0) rc = describe_dataset(m, shown, err);
  return xio_agree(comm, rc, err);
}

int xio_open_input(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                   xio_matrix *m, xio_error *err) {
  return open_dataset(comm, path, shown, dataset, H5F_ACC_RDONLY, m, err);
}

int xio_matrix_read_netcdf3(xio_matrix *m, const char *path, const char *shown, xio_error *err) {
  xio_nc3_source_free(m->netcdf3);
  m->netcdf3 = NULL;
  return xio_nc3_source_open(path, m->dataset, &m->shape, shown, &m->netcdf3, err);
}

int xio_open_existing(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      int writable, xio_matrix *m, xio_error *err) {
  return open_dataset(comm, path, shown, dataset, writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, m, err);
}

/* m's dataset closed, its file and communicator kept, the rest anew. */
int xio_matrix_drop_dataset(xio_matrix *m, xio_error *err) {
  int rc = 0;
  if (m->dset >= 0 && H5Dclose(m->dset) < 0) rc = xio_fail_h5(err, "closing %s failed", m->dataset);
  xio_release(H5Tclose, &m->type, &rc, err);
  xio_chunk_index_free(m->chunk_index);
  xio_nc3_source_free(m->netcdf3);
  xio_source_free(m->source);
  const hid_t file = m->file;
  xio_matrix_init(m, m->comm);
  m->file = file;
  return rc;
}

int xio_use_dataset(xio_matrix *m, const char *shown, const char *dataset, xio_error *err) {
  int rc = xio_matrix_drop_dataset(m, err);
  snprintf(m->dataset, sizeof m->dataset, "%s", dataset);
  if (rc == 0 && (m->dset = H5Dopen2(m->file, m->dataset, H5P_DEFAULT)) < 0)
    rc = xio_fail_h5(err, "%s has no dataset %s", shown, m->dataset);
  if (rc == 0) rc = describe_dataset(m, shown, err);
  return xio_agree(m->comm, rc, err);
}

int xio_flush(const xio_matrix *m, xio_error *err) {
  int rc = 0;
  char path[4096] = ""; /* named first: a call after the flush clears its error */
  if (m->file >= 0) {   /* every rank's, or the one writer's */
    (void)H5Fget_name(m->file, path, sizeof path);
    if (H5Fflush(m->file, H5F_SCOPE_GLOBAL) < 0)
      rc = xio_fail_h5(err, "flushing %s:%s to storage failed", path, m->dataset);
  }
  return xio_agree(m->comm, rc, err);
}

int xio_file_size(const xio_matrix *m, uint64_t *bytes, xio_error *err) {
  MPI_File *handle = NULL;
  MPI_Offset size = 0;
  const int rc = m->one_writer ? xio_fail(err, "internal: %s is held by one writer", m->dataset)
                 : H5Fget_vfd_handle(m->file, H5P_DEFAULT, (void **)&handle) < 0 || !handle
                     ? xio_fail_h5(err, "cannot size %s's file", m->dataset)
                     : XIO_MPICHECK(MPI_File_get_size(*handle, &size), err);
  *bytes = (uint64_t)size;
  return xio_agree(m->comm, rc, err);
}

int xio_close(xio_matrix *m, xio_error *err) {
  if (m->comm == MPI_COMM_NULL) return 0;
  int rc = 0;
  if (m->dset >= 0 && H5Dclose(m->dset) < 0) rc = xio_fail_h5(err, "closing %s failed", m->dataset);
  xio_release(H5Tclose, &m->type, &rc, err);
  if (m->file >= 0 && H5Fclose(m->file) < 0 && rc == 0)
    rc = xio_fail_h5(err, "closing the file of %s failed", m->dataset);
  xio_chunk_index_free(m->chunk_index);
  xio_nc3_source_free(m->netcdf3);
  xio_source_free(m->source);
  free(m->zarr);
  const MPI_Comm comm = m->comm;
  xio_matrix_init(m, MPI_COMM_NULL);
  return xio_agree(comm, rc, err);
}

xio_storage_like xio_matrix_storage_like(const xio_matrix *m) {
  xio_storage_like like = {m->dataset, m->dset, m->chunked, m->type_size, m->shape, {0}};
  memcpy(like.chunk_dims, m->chunk_dims, sizeof like.chunk_dims);
  return like;
}

void xio_describe_storage(const xio_matrix *m, char *text, size_t size) {
  if (m->describe) return m->describe(m, text, size);
  snprintf(text, size, "unknown");
  const hid_t dcpl = H5Dget_create_plist(m->dset);
  if (dcpl < 0) return;
  xio_describe_dcpl(dcpl, text, size);
  (void)H5Pclose(dcpl); /* only read */
}

void xio_source_free(xio_block_source *source) {
  if (!source) return;
  if (source->free) source->free(source->state);
  free(source);
}
