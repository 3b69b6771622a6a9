#include "h5_matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chunk_reader.h"
#include "chunk_writer.h"
#include "h5_compat.h"
#include "h5_types.h"
#include "mpi_hints.h"
#include "mpi_io_name.h"
#include "netcdf3.h"

static void matrix_init(xio_matrix *m, MPI_Comm comm) {
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

void xio_matrix_reset(xio_matrix *m) { matrix_init(m, MPI_COMM_NULL); }

/* ---- folding N axes into a matrix ---- */

/* The product of dims[a..b), or -1 past INT64_MAX. */
static int64_t product(const int64_t *dims, int a, int b) {
  int64_t n = 1;
  for (int i = a; i < b; i++) {
    if (dims[i] != 0 && n > INT64_MAX / dims[i]) return -1;
    n *= dims[i];
  }
  return n;
}

/* A run of a group's flattened positions starting and ending on multiples
 * of this covers whole chunks: whole extents of the group's inner axes
 * (which their chunks tile, edges included), and of its first axis a
 * multiple of that axis's chunk. */
static int64_t chunk_unit(const xio_matrix *m, int a, int b) {
  return a < b ? m->chunk_dims[a] * product(m->shape.dims, a + 1, b) : 1;
}

int xio_matrix_fold(xio_matrix *m, int lead, int split, int trail, xio_error *err) {
  const xio_shape *s = &m->shape;
  if (!(0 <= lead && lead < split && split < trail && trail <= s->ndims))
    return xio_fail(err, "%s: cannot fold %d axes at %d, %d, %d", m->dataset, s->ndims, lead, split,
                    trail);
  const int64_t rows = product(s->dims, 0, split), cols = product(s->dims, split, trail),
                inside = product(s->dims, trail, s->ndims);
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
  m->items = m->rows && m->cols ? product(s->dims, 0, lead) : 1;
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

/* ---- opening ---- */

/* The layout, chunk shape and filters of m, from its creation properties. */
static int describe_storage(xio_matrix *m, hid_t dcpl, const char *path, xio_error *err) {
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
                : describe_storage(m, dcpl, path, err);
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
  matrix_init(m, comm);
  named_file file = {path, shown};
  if ((flags & H5F_ACC_RDWR) && xio_on_root(comm, allocate_to_end, &file, err)) return -1;
  int rc = 0;
  hid_t fapl = xio_file_access(comm);
  if (fapl < 0) rc = xio_fail_h5(err, "cannot set up MPI-IO file access");
  char name[4096];
  if (rc == 0) rc = xio_mpi_io_name(comm, path, shown, name, sizeof name, err);
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

/* The fill value `from`'s creator chose, if any, into dcpl: readers of
 * the output see it as the dataset's, though every element is written. */
static int copy_fill_value(const xio_matrix *from, hid_t dcpl) {
  if (!from) return 0;
  hid_t source = H5Dget_create_plist(from->dset);
  H5D_fill_value_t status = H5D_FILL_VALUE_ERROR;
  int rc = source < 0 || H5Pfill_value_defined(source, &status) < 0 ? -1 : 0;
  if (rc == 0 && status == H5D_FILL_VALUE_USER_DEFINED) {
    void *value = calloc(1, from->elem_size);
    rc = !value || H5Pget_fill_value(source, from->type, value) < 0 ||
                 H5Pset_fill_value(dcpl, from->type, value) < 0
             ? -1
             : 0;
    free(value);
  }
  if (source >= 0 && H5Pclose(source) < 0) rc = -1;
  return rc;
}

/* The creation properties of an output dataset (xio_create_output). */
static int output_dataset_properties(xio_matrix *m, const xio_matrix *like,
                                     const xio_storage *storage, const xio_shape *shape, hid_t type,
                                     const char *shown, hid_t lcpl, hid_t dcpl, xio_error *err) {
  const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  if (lcpl < 0 || dcpl < 0 || H5Pset_attr_creation_order(dcpl, order) < 0 ||
      H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || copy_fill_value(like, dcpl) < 0)
    return xio_fail_h5(err, "cannot set up the output's properties");
  m->shape = *shape;
  m->type_size = H5Tget_size(type);
  const xio_storage_like source = like ? xio_matrix_storage_like(like) : (xio_storage_like){0};
  if (xio_storage_apply(like ? &source : NULL, storage, shape, H5Tget_size(type), dcpl, shown, err))
    return -1;
  return describe_storage(m, dcpl, shown, err);
}

/* Collective: m's dataset, made in its open file with those properties. */
static int make_output_dataset(xio_matrix *m, const char *shown, const char *dataset, hid_t type,
                               const xio_shape *shape, hid_t lcpl, hid_t dcpl, xio_error *err) {
  int rc = 0;
  snprintf(m->dataset, sizeof m->dataset, "%s%s", dataset[0] == '/' ? "" : "/", dataset);
  hsize_t dims[XIO_MAX_DIMS], maxdims[XIO_MAX_DIMS];
  for (int i = 0; i < shape->ndims; i++) {
    dims[i] = (hsize_t)shape->dims[i];
    maxdims[i] = m->chunked && (shape->unlimited >> i & 1u) ? H5S_UNLIMITED : dims[i];
  }
  hid_t space = H5Screate_simple(shape->ndims, dims, maxdims);
  m->type = H5Tcopy(type);
  if (space >= 0 && m->type >= 0)
    m->dset = H5Dcreate2(m->file, m->dataset, m->type, space, lcpl, dcpl, H5P_DEFAULT);
  if (m->dset < 0) rc = xio_fail_h5(err, "%s: cannot create dataset %s", shown, m->dataset);
  m->type_size = H5Tget_size(type);
  if (m->type_size == 0 && rc == 0) rc = xio_fail_h5(err, "%s: cannot size its datatype", shown);
  if (rc == 0) rc = xio_matrix_fold(m, shape->lead, shape->split, shape->trail, err);
  xio_release(H5Sclose, &space, &rc, err);
  return rc;
}

int xio_create_file(MPI_Comm comm, const char *path, const char *shown, xio_matrix *m,
                    xio_error *err) {
  matrix_init(m, comm);
  int rc = 0;
  hid_t fapl = xio_file_access(comm), fcpl = H5Pcreate(H5P_FILE_CREATE);
  /* The 1.8 format keeps attributes larger than 64 KiB (dense storage).
   * Objects of 1 MiB or more (the datasets) start on a 4 KiB page, so that
   * raw writes of whole pages share no page with the file's metadata
   * (2 ranks, 2 GiB on the 2-core VM: 7.5 s against 9.2 s).  Link and
   * attribute creation order are tracked, as netCDF-C does: without it
   * netCDF-C opens the file read-only ("NetCDF: Can't write file"). */
  const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  if (fapl < 0 || fcpl < 0 || H5Pset_link_creation_order(fcpl, order) < 0 ||
      H5Pset_attr_creation_order(fcpl, order) < 0 ||
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0 ||
      H5Pset_alignment(fapl, 1 << 20, 4096) < 0)
    rc = xio_fail_h5(err, "cannot set up the output file's properties");
  char name[4096];
  if (rc == 0) rc = xio_mpi_io_name(comm, path, shown, name, sizeof name, err);
  if (rc == 0) {
    m->file = H5Fcreate(name, H5F_ACC_EXCL, fcpl, fapl);
    if (m->file < 0) rc = xio_fail_h5(err, "%s: cannot create", shown);
  }
  xio_release(H5Pclose, &fapl, &rc, err);
  xio_release(H5Pclose, &fcpl, &rc, err);
  return xio_agree(comm, rc, err);
}

int xio_create_output(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      hid_t type, const xio_matrix *like, const xio_storage *storage,
                      const xio_shape *shape, xio_matrix *m, xio_error *err) {
  return xio_create_file(comm, path, shown, m, err) ||
                 xio_create_dataset(m, shown, dataset, type, like, storage, shape, err)
             ? -1
             : 0;
}

int xio_plan_dataset(const xio_matrix *like, const xio_storage *storage, const xio_shape *shape,
                     hid_t type, const xio_matrix *from, xio_matrix *m, char *text, size_t size,
                     xio_error *err) {
  matrix_init(m, MPI_COMM_NULL);
  snprintf(m->dataset, sizeof m->dataset, "%s", from->dataset);
  m->type_size = H5Tget_size(type);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  int rc = output_dataset_properties(m, like, storage, shape, type, m->dataset, lcpl, dcpl, err);
  if (rc == 0) xio_describe_dcpl(dcpl, text, size);
  if (rc == 0) rc = xio_matrix_fold_as_transpose(m, from, err);
  xio_release(H5Pclose, &lcpl, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  return rc;
}

/* m's dataset closed, its file and communicator kept, the rest anew. */
static int drop_dataset(xio_matrix *m, xio_error *err) {
  int rc = 0;
  if (m->dset >= 0 && H5Dclose(m->dset) < 0) rc = xio_fail_h5(err, "closing %s failed", m->dataset);
  xio_release(H5Tclose, &m->type, &rc, err);
  xio_chunk_index_free(m->chunk_index);
  xio_nc3_source_free(m->netcdf3);
  const hid_t file = m->file;
  matrix_init(m, m->comm);
  m->file = file;
  return rc;
}

int xio_use_dataset(xio_matrix *m, const char *shown, const char *dataset, xio_error *err) {
  int rc = drop_dataset(m, err);
  snprintf(m->dataset, sizeof m->dataset, "%s", dataset);
  if (rc == 0 && (m->dset = H5Dopen2(m->file, m->dataset, H5P_DEFAULT)) < 0)
    rc = xio_fail_h5(err, "%s has no dataset %s", shown, m->dataset);
  if (rc == 0) rc = describe_dataset(m, shown, err);
  return xio_agree(m->comm, rc, err);
}

int xio_create_dataset(xio_matrix *m, const char *shown, const char *dataset, hid_t type,
                       const xio_matrix *like, const xio_storage *storage, const xio_shape *shape,
                       xio_error *err) {
  int rc = drop_dataset(m, err);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (rc == 0)
    rc = output_dataset_properties(m, like, storage, shape, type, shown, lcpl, dcpl, err);
  if (xio_agree(m->comm, rc, err) == 0)
    rc = make_output_dataset(m, shown, dataset, type, shape, lcpl, dcpl, err);
  else
    rc = -1;
  xio_release(H5Pclose, &lcpl, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  return xio_agree(m->comm, rc, err);
}

/* ---- collective block transfers ---- */

enum { MAX_SLABS = 2 * XIO_MAX_DIMS };

typedef struct {
  int count;
  hsize_t start[MAX_SLABS][XIO_MAX_DIMS], size[MAX_SLABS][XIO_MAX_DIMS];
} slab_list;

/* Appends to `list` the hyperslabs of axes [a, b) of dims holding their
 * row-major positions [first, end) (first < end), axes before a set as in
 * start and size: a partial run of the first axis, whole ones, a partial
 * one, each of the rest recursively; at most 2 (b - a) - 1 of them. */
static void range_slabs(const int64_t *dims, int a, int b, int64_t first, int64_t end,
                        hsize_t *start, hsize_t *size, slab_list *list) {
  if (a == b) {
    memcpy(list->start[list->count], start, sizeof list->start[0]);
    memcpy(list->size[list->count++], size, sizeof list->size[0]);
    return;
  }
  const int64_t inner = product(dims, a + 1, b);
  int64_t from = first / inner;
  const int64_t to = end / inner, head = first % inner, tail = end % inner;
  if (from == to) { /* within one position of axis a */
    start[a] = (hsize_t)from, size[a] = 1;
    range_slabs(dims, a + 1, b, head, tail, start, size, list);
    return;
  }
  if (head) {
    start[a] = (hsize_t)from++, size[a] = 1;
    range_slabs(dims, a + 1, b, head, inner, start, size, list);
  }
  if (to > from) {
    start[a] = (hsize_t)from, size[a] = (hsize_t)(to - from);
    for (int i = a + 1; i < b; i++) start[i] = 0, size[i] = (hsize_t)dims[i];
    range_slabs(dims, b, b, 0, 1, start, size, list);
  }
  if (tail) {
    start[a] = (hsize_t)to, size[a] = 1;
    range_slabs(dims, a + 1, b, 0, tail, start, size, list);
  }
}

/* Selects in fspace the folded block [row, row + nrows) x [col, col +
 * ncols): the union of the row groups' slabs times the column groups'
 * (one hyperslab for a 2-D dataset).  HDF5 moves a selection's elements in
 * the dataspace's row-major order, which is the block's own.  *slabs says
 * how many; `size` is the last one's shape. */
static herr_t select_block(const xio_matrix *m, hid_t fspace, int64_t row, int64_t nrows,
                           int64_t col, int64_t ncols, int *slabs, hsize_t *size) {
  const xio_shape *s = &m->shape;
  hsize_t start[XIO_MAX_DIMS] = {0};
  for (int i = 0; i < s->ndims; i++) size[i] = i < s->trail ? 0 : (hsize_t)s->dims[i];
  slab_list rows = {0}, cols = {0};
  range_slabs(s->dims, 0, s->split, row, row + nrows, start, size, &rows);
  range_slabs(s->dims, s->split, s->trail, col, col + ncols, start, size, &cols);
  herr_t status = 0;
  for (int r = 0; r < rows.count && status >= 0; r++)
    for (int c = 0; c < cols.count && status >= 0; c++) {
      memcpy(start, rows.start[r], sizeof start);
      memcpy(size, rows.size[r], sizeof rows.size[r]);
      memcpy(start + s->split, cols.start[c] + s->split,
             sizeof start[0] * (size_t)(s->trail - s->split));
      memcpy(size + s->split, cols.size[c] + s->split,
             sizeof size[0] * (size_t)(s->trail - s->split));
      status = H5Sselect_hyperslab(fspace, r + c ? H5S_SELECT_OR : H5S_SELECT_SET, start, NULL,
                                   size, NULL);
    }
  *slabs = rows.count * cols.count;
  return status;
}

static int transfer_block(const xio_matrix *m, int writing, int64_t row, int64_t nrows, int64_t col,
                          int64_t ncols, void *buf, xio_error *err) {
  /* A dataset without elements has no storage that MPI-IO could address;
   * the shape is the same on every rank, so all of them return here. */
  if (m->rows == 0 || m->cols == 0) return 0;
  if (m->one_writer) return xio_fail(err, "internal: %s is held by one writer", m->dataset);
  if (!writing && m->netcdf3)
    return xio_agree(
        m->comm,
        xio_nc3_source_read(m->netcdf3, m->cols, m->elem_size, row, nrows, col, ncols, buf, err),
        err);
  const int raw = !writing && m->chunk_index
                      ? xio_chunk_index_build(m->chunk_index, m->comm, m->file, m->dset, &m->shape,
                                              m->type_size, m->dataset, err)
                      : 0;
  if (raw < 0) return -1;
  if (raw)
    return xio_agree(m->comm,
                     xio_chunk_index_read(m->chunk_index, &m->shape, m->elem_size, row, nrows, col,
                                          ncols, buf, err),
                     err);
  int rc = 0;
  hid_t fspace = H5Dget_space(m->dset), mspace = H5I_INVALID_HID,
        dxpl = H5Pcreate(H5P_DATASET_XFER);
  char dummy = 0; /* HDF5 wants a buffer even for an empty selection */
  /* Chunks never written read as the fill value; HDF5 1.10's collective
   * read fails (MPI_ERR_TYPE) or deadlocks when a rank's selection holds
   * only such chunks, so chunked datasets are read independently.  Every
   * rank still makes the call, and the result is agreed below. */
  const H5FD_mpio_xfer_t mode =
      !writing && m->chunked ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE;
  if (fspace < 0 || dxpl < 0 || H5Pset_dxpl_mpio(dxpl, mode) < 0) {
    rc = xio_fail_h5(err, "cannot set up a collective transfer");
  } else if (nrows > 0 && ncols > 0) {
    /* One hyperslab is given a memory space of its own shape: where the
     * shapes differ, HDF5 maps a chunked selection element by element (a
     * 308 MiB read-back took 13 s against 2). */
    const hsize_t elements =
        (hsize_t)nrows * (hsize_t)ncols * (hsize_t)(m->elem_size / m->type_size);
    hsize_t size[XIO_MAX_DIMS];
    int slabs = 0;
    if (select_block(m, fspace, row, nrows, col, ncols, &slabs, size) < 0) slabs = -1;
    mspace = slabs == 1 ? H5Screate_simple(m->shape.ndims, size, NULL)
                        : H5Screate_simple(1, &elements, NULL);
    if (mspace < 0 || slabs < 0)
      rc = xio_fail_h5(err, "cannot select rows %lld-%lld, columns %lld-%lld of %s", (long long)row,
                       (long long)(row + nrows - 1), (long long)col, (long long)(col + ncols - 1),
                       m->dataset);
  } else {
    const hsize_t one = 1;
    mspace = H5Screate_simple(1, &one, NULL);
    buf = &dummy;
    if (mspace < 0 || H5Sselect_none(mspace) < 0 || H5Sselect_none(fspace) < 0)
      rc = xio_fail_h5(err, "cannot set up an empty selection");
  }
  /* Every rank enters the collective call, even after a local failure
   * (with nothing selected), so no rank waits inside MPI-IO forever.  Only
   * where even that cannot be set up does this rank stay out. */
  if (rc != 0 && fspace >= 0 && mspace >= 0) {
    buf = &dummy;
    if (H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0) {
      xio_release(H5Sclose, &fspace, &rc, err);
      xio_release(H5Sclose, &mspace, &rc, err);
    }
  }
  if (fspace >= 0 && mspace >= 0 && dxpl >= 0) {
    herr_t status = writing ? H5Dwrite(m->dset, m->type, mspace, fspace, dxpl, buf)
                            : H5Dread(m->dset, m->type, mspace, fspace, dxpl, buf);
    if (status < 0 && rc == 0)
      rc = xio_fail_h5(err, "%s %s failed", writing ? "writing" : "reading", m->dataset);
  }
  xio_release(H5Sclose, &mspace, &rc, err);
  xio_release(H5Sclose, &fspace, &rc, err);
  xio_release(H5Pclose, &dxpl, &rc, err);
  return xio_agree(m->comm, rc, err);
}

int xio_read_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                   void *buf, xio_error *err) {
  return transfer_block(m, 0, row, nrows, col, ncols, buf, err);
}

int xio_reads_alone(const xio_matrix *m) {
  return m->chunk_index && !m->netcdf3 && xio_chunk_index_ready(m->chunk_index);
}

void xio_read_ahead(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols) {
  if (m->chunk_index)
    xio_chunk_index_ask_ahead(m->chunk_index, &m->shape, m->elem_size, row, nrows, col, ncols);
}

int xio_write_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                    const void *buf, xio_error *err) {
  return transfer_block(m, 1, row, nrows, col, ncols, (void *)buf, err);
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
  const MPI_Comm comm = m->comm;
  matrix_init(m, MPI_COMM_NULL);
  return xio_agree(comm, rc, err);
}

xio_storage_like xio_matrix_storage_like(const xio_matrix *m) {
  xio_storage_like like = {m->dataset, m->dset, m->chunked, m->type_size, m->shape, {0}};
  memcpy(like.chunk_dims, m->chunk_dims, sizeof like.chunk_dims);
  return like;
}

void xio_describe_storage(const xio_matrix *m, char *text, size_t size) {
  snprintf(text, size, "unknown");
  const hid_t dcpl = H5Dget_create_plist(m->dset);
  if (dcpl < 0) return;
  xio_describe_dcpl(dcpl, text, size);
  (void)H5Pclose(dcpl); /* only read */
}
