#include "h5_matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "h5_types.h"
#include "mpi_hints.h"

#if H5_VERSION_GE(1, 12, 0)
typedef H5L_info2_t xio_link_info;
#define XIO_LINK_VISIT H5Lvisit2
#define XIO_RECLAIM(type, space, buf) H5Treclaim(type, space, H5P_DEFAULT, buf)
#else
typedef H5L_info_t xio_link_info;
#define XIO_LINK_VISIT H5Lvisit
#define XIO_RECLAIM(type, space, buf) H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf)
#endif

static void matrix_init(xio_matrix *m, MPI_Comm comm) {
  /* comm == MPI_COMM_NULL marks a matrix that was never opened */
  memset(m, 0, sizeof *m);
  m->comm = comm;
  m->file = m->dset = m->type = H5I_INVALID_HID;
}

/* MPI-IO access; metadata is read by one rank and broadcast, and written
 * collectively, which every rank here does in the same order anyway. */
static hid_t file_access(MPI_Comm comm) {
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

/* ---- finding the 2-D datasets of a file ---- */

typedef struct {
  int count;
  char first[512];
  char listing[768]; /* the first few names, for the error message */
} dataset_search;

static herr_t visit_link(hid_t group, const char *name, const xio_link_info *info, void *data) {
  dataset_search *search = data;
  if (info->type != H5L_TYPE_HARD) return 0;
  hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
  if (obj < 0) return 0;
  herr_t status = 0;
  if (H5Iget_type(obj) == H5I_DATASET) {
    hid_t space = H5Dget_space(obj);
    if (space >= 0 && H5Sget_simple_extent_ndims(space) == 2) {
      if (search->count == 0) snprintf(search->first, sizeof search->first, "/%s", name);
      const size_t used = strlen(search->listing);
      if (search->count < 8)
        snprintf(search->listing + used, sizeof search->listing - used, "%s/%s",
                 search->count ? ", " : "", name);
      else if (search->count == 8)
        snprintf(search->listing + used, sizeof search->listing - used, ", ...");
      search->count++;
    }
    if (space >= 0 && H5Sclose(space) < 0) status = -1;
  }
  if (H5Oclose(obj) < 0) status = -1;
  return status; /* a failure stops the visit, which reports it */
}

static int find_only_2d_dataset(hid_t file, const char *path, char *dataset, size_t size,
                                xio_error *err) {
  dataset_search search = {0, "", ""};
  if (XIO_LINK_VISIT(file, H5_INDEX_NAME, H5_ITER_INC, visit_link, &search) < 0)
    return xio_fail_h5(err, "%s: cannot list its objects", path);
  if (search.count == 0) return xio_fail(err, "%s holds no 2-D dataset", path);
  if (search.count > 1)
    return xio_fail(err, "%s holds %d 2-D datasets (%s); name one as %s:/DATASET", path,
                    search.count, search.listing, path);
  snprintf(dataset, size, "%s", search.first);
  return 0;
}

/* ---- opening ---- */

/* The layout, chunk shape and filters of m, from its creation properties. */
static int describe_storage(xio_matrix *m, hid_t dcpl, const char *path, xio_error *err) {
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  if (layout == H5D_LAYOUT_ERROR)
    return xio_fail_h5(err, "%s:%s: cannot read its layout", path, m->dataset);
  m->chunked = layout == H5D_CHUNKED;
  hsize_t chunk[2] = {0, 0};
  if (m->chunked && H5Pget_chunk(dcpl, 2, chunk) != 2)
    return xio_fail_h5(err, "%s:%s: cannot read its chunk shape", path, m->dataset);
  m->chunk_rows = (int64_t)chunk[0];
  m->chunk_cols = (int64_t)chunk[1];
  const int filters = m->chunked ? H5Pget_nfilters(dcpl) : 0;
  if (filters < 0) return xio_fail_h5(err, "%s:%s: cannot read its filters", path, m->dataset);
  m->filtered = filters > 0;
  return 0;
}

static int describe_dataset(xio_matrix *m, const char *path, xio_error *err) {
  hid_t space = H5Dget_space(m->dset);
  if (space < 0) return xio_fail_h5(err, "%s:%s: cannot read its shape", path, m->dataset);
  const int ndims = H5Sget_simple_extent_ndims(space);
  hsize_t dims[H5S_MAX_RANK] = {0};
  int rc = ndims < 0 || (ndims > 0 && H5Sget_simple_extent_dims(space, dims, NULL) < 0)
               ? xio_fail_h5(err, "%s:%s: cannot read its shape", path, m->dataset)
               : 0;
  xio_release(H5Sclose, &space, &rc, err);
  if (rc) return -1;
  if (ndims != 2) {
    char shape[256] = "";
    size_t used = 0;
    for (int i = 0; i < ndims && used < sizeof shape; i++)
      used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%llu", i ? " x " : "",
                               (unsigned long long)dims[i]);
    if (ndims <= 0)
      return xio_fail(err, "%s:%s is a scalar or empty dataspace, not a 2-D matrix", path,
                      m->dataset);
    return xio_fail(err, "%s:%s is %d-D (%s); xpose transposes 2-D datasets", path, m->dataset,
                    ndims, shape);
  }
  m->rows = (int64_t)dims[0];
  m->cols = (int64_t)dims[1];
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
  m->elem_size = H5Tget_size(m->type);
  if (m->elem_size == 0) return xio_fail(err, "%s:%s has 0-byte elements", path, m->dataset);
  hid_t dcpl = H5Dget_create_plist(m->dset);
  rc = dcpl < 0 ? xio_fail_h5(err, "%s:%s: cannot read its layout", path, m->dataset)
                : describe_storage(m, dcpl, path, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  return rc;
}

/* `path` is opened; `shown` names it in messages (the user's name for a
 * file written under a temporary one). */
static int open_dataset(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                        int search, unsigned flags, xio_matrix *m, xio_error *err) {
  matrix_init(m, comm);
  int rc = 0;
  hid_t fapl = file_access(comm);
  if (fapl < 0) rc = xio_fail_h5(err, "cannot set up MPI-IO file access");
  if (rc == 0) {
    m->file = H5Fopen(path, flags, fapl);
    if (m->file < 0) rc = xio_fail_h5(err, "%s: cannot open as an HDF5 file", shown);
  }
  xio_release(H5Pclose, &fapl, &rc, err);
  if (xio_agree(comm, rc, err)) return -1;

  if (search && !dataset[0]) {
    rc = find_only_2d_dataset(m->file, shown, m->dataset, sizeof m->dataset, err);
  } else {
    snprintf(m->dataset, sizeof m->dataset, "%s", dataset);
    htri_t exists = H5Lexists(m->file, m->dataset, H5P_DEFAULT);
    /* H5Lexists fails (< 0) when an intermediate group is missing. */
    if (exists <= 0) rc = xio_fail(err, "%s has no dataset %s", shown, m->dataset);
  }
  if (rc == 0) {
    m->dset = H5Dopen2(m->file, m->dataset, H5P_DEFAULT);
    if (m->dset < 0) rc = xio_fail_h5(err, "%s:%s is not a dataset", shown, m->dataset);
  }
  if (rc == 0) rc = describe_dataset(m, shown, err);
  return xio_agree(comm, rc, err);
}

int xio_open_input(MPI_Comm comm, const char *path, const char *dataset, xio_matrix *m,
                   xio_error *err) {
  return open_dataset(comm, path, path, dataset ? dataset : "", 1, H5F_ACC_RDONLY, m, err);
}

int xio_open_existing(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      int writable, xio_matrix *m, xio_error *err) {
  return open_dataset(comm, path, shown, dataset, 0, writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, m,
                      err);
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

int xio_create_output(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      hid_t type, const xio_matrix *like, const xio_storage *storage,
                      int64_t rows, int64_t cols, xio_matrix *m, xio_error *err) {
  matrix_init(m, comm);
  int rc = 0;
  hid_t fapl = file_access(comm), fcpl = H5Pcreate(H5P_FILE_CREATE),
        lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE),
        space = H5I_INVALID_HID;
  /* The 1.8 format keeps attributes larger than 64 KiB (dense storage).
   * Objects of 1 MiB or more (the dataset) start on a 4 KiB page, so that
   * raw writes of whole pages share no page with the file's metadata
   * (2 ranks, 2 GiB on the 2-core VM: 7.5 s against 9.2 s).  Link and
   * attribute creation order are tracked, as netCDF-C does: without it
   * netCDF-C opens the file read-only ("NetCDF: Can't write file"). */
  const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  if (fapl < 0 || fcpl < 0 || lcpl < 0 || dcpl < 0 ||
      H5Pset_link_creation_order(fcpl, order) < 0 || H5Pset_attr_creation_order(fcpl, order) < 0 ||
      H5Pset_attr_creation_order(dcpl, order) < 0 ||
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0 ||
      H5Pset_alignment(fapl, 1 << 20, 4096) < 0 ||
      H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || copy_fill_value(like, dcpl) < 0)
    rc = xio_fail_h5(err, "cannot set up the output file's properties");
  if (rc == 0)
    rc = xio_storage_apply(like, storage, rows, cols, H5Tget_size(type), dcpl, shown, err);
  if (rc == 0) rc = describe_storage(m, dcpl, shown, err);
  if (rc == 0) {
    m->file = H5Fcreate(path, H5F_ACC_EXCL, fcpl, fapl);
    if (m->file < 0) rc = xio_fail_h5(err, "%s: cannot create", shown);
  }
  if (xio_agree(comm, rc, err) == 0) {
    snprintf(m->dataset, sizeof m->dataset, "%s%s", dataset[0] == '/' ? "" : "/", dataset);
    const hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
    space = H5Screate_simple(2, dims, NULL);
    m->type = H5Tcopy(type);
    if (space >= 0 && m->type >= 0)
      m->dset = H5Dcreate2(m->file, m->dataset, m->type, space, lcpl, dcpl, H5P_DEFAULT);
    if (m->dset < 0) rc = xio_fail_h5(err, "%s: cannot create dataset %s", shown, m->dataset);
    m->rows = rows;
    m->cols = cols;
    m->elem_size = H5Tget_size(type);
    if (m->elem_size == 0 && rc == 0) rc = xio_fail_h5(err, "%s: cannot size its datatype", shown);
  } else {
    rc = -1;
  }
  xio_release(H5Sclose, &space, &rc, err);
  xio_release(H5Pclose, &fapl, &rc, err);
  xio_release(H5Pclose, &fcpl, &rc, err);
  xio_release(H5Pclose, &lcpl, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  return xio_agree(comm, rc, err);
}

/* ---- collective block transfers ---- */

static int transfer_block(const xio_matrix *m, int writing, int64_t row, int64_t nrows, int64_t col,
                          int64_t ncols, void *buf, xio_error *err) {
  /* A dataset without elements has no storage that MPI-IO could address;
   * the shape is the same on every rank, so all of them return here. */
  if (m->rows == 0 || m->cols == 0) return 0;
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
    const hsize_t start[2] = {(hsize_t)row, (hsize_t)col},
                  count[2] = {(hsize_t)nrows, (hsize_t)ncols};
    const hsize_t elements = (hsize_t)nrows * (hsize_t)ncols;
    mspace = H5Screate_simple(1, &elements, NULL);
    if (mspace < 0 || H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
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

int xio_write_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                    const void *buf, xio_error *err) {
  return transfer_block(m, 1, row, nrows, col, ncols, (void *)buf, err);
}

/* ---- attributes ---- */

typedef struct {
  hid_t to;
  int transposed; /* the dataset itself: per-axis attributes swap */
  xio_skipped_attributes *skipped;
  int failed;
  xio_error *err;
} attribute_copy;

/* Attributes naming the axes in order, swapped on the transposed dataset:
 * the labels (h5py's dims[i].label, H5DSset_label) and netCDF-4's ids of
 * the variable's dimensions (kept true by copying the dimension scales,
 * which carry the ids, along: h5_scales.c). */
static int names_axes_in_order(const char *name) {
  return strcmp(name, "DIMENSION_LABELS") == 0 || strcmp(name, "_Netcdf4Coordinates") == 0;
}

/* The links between a dataset and its dimension scales, which
 * attaching the copied scales makes anew. */
static int is_dimension_scale_link(const char *name) {
  return strcmp(name, "DIMENSION_LIST") == 0 || strcmp(name, "REFERENCE_LIST") == 0;
}

static void skip(xio_skipped_attributes *skipped, const char *name) {
  const size_t used = strlen(skipped->names);
  if (skipped->count < 6)
    snprintf(skipped->names + used, sizeof skipped->names - used, "%s%s", used ? ", " : "", name);
  else if (skipped->count == 6)
    snprintf(skipped->names + used, sizeof skipped->names - used, ", ...");
  skipped->count++;
}

static herr_t copy_attribute(hid_t from, const char *name, const H5A_info_t *info, void *data) {
  (void)info;
  attribute_copy *copy = data;
  hid_t attr = H5Aopen(from, name, H5P_DEFAULT);
  hid_t type = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID; /* a memory type, vlen too */
  hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
  hid_t out = H5I_INVALID_HID;
  void *buf = NULL;
  int rc = 0;
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  const H5S_class_t kind = space >= 0 ? H5Sget_simple_extent_type(space) : H5S_NO_CLASS;
  const size_t size = type >= 0 ? H5Tget_size(type) : 0;
  if (type < 0 || space < 0 || points < 0 || kind == H5S_NO_CLASS || size == 0) {
    rc = xio_fail_h5(copy->err, "cannot read attribute %s", name);
  } else if (is_dimension_scale_link(name)) {
    /* made anew */
  } else if (xio_type_has_reference(type) ||
             (copy->transposed && strcmp(name, "_Netcdf4Dimid") == 0)) {
    skip(copy->skipped, name); /* references cannot point into another file */
  } else {
    const int has_data = points > 0 && kind != H5S_NULL;
    buf = calloc(has_data ? (size_t)points : 1, size);
    if (!buf || (has_data && H5Aread(attr, type, buf) < 0)) {
      rc = xio_fail_h5(copy->err, "cannot read attribute %s", name);
    } else {
      unsigned char *first = NULL;
      if (copy->transposed && names_axes_in_order(name) && points == 2 && kind == H5S_SIMPLE &&
          (first = malloc(size)) != NULL) {
        memcpy(first, buf, size);
        memmove(buf, (unsigned char *)buf + size, size);
        memcpy((unsigned char *)buf + size, first, size);
      }
      free(first);
      out = H5Acreate2(copy->to, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
      if (out < 0 || (has_data && H5Awrite(out, type, buf) < 0))
        rc = xio_fail_h5(copy->err, "cannot copy attribute %s", name);
      /* frees variable-length parts */
      if (has_data && XIO_RECLAIM(type, space, buf) < 0 && rc == 0)
        rc = xio_fail_h5(copy->err, "cannot release attribute %s", name);
    }
  }
  free(buf);
  xio_release(H5Aclose, &out, &rc, copy->err);
  xio_release(H5Sclose, &space, &rc, copy->err);
  xio_release(H5Tclose, &type, &rc, copy->err);
  xio_release(H5Aclose, &attr, &rc, copy->err);
  if (rc) copy->failed = 1;
  return rc ? -1 : 0;
}

static int copy_attributes(const xio_matrix *from, const xio_matrix *to, int transposed,
                           xio_skipped_attributes *skipped, xio_error *err) {
  memset(skipped, 0, sizeof *skipped);
  attribute_copy copy = {to->dset, transposed, skipped, 0, err};
  hsize_t index = 0;
  int rc = 0;
  if (H5Aiterate2(from->dset, H5_INDEX_NAME, H5_ITER_INC, &index, copy_attribute, &copy) < 0) {
    if (!copy.failed) xio_fail_h5(err, "cannot list the attributes of %s", from->dataset);
    rc = -1;
  }
  return xio_agree(from->comm, rc, err);
}

int xio_copy_attributes(const xio_matrix *from, const xio_matrix *to,
                        xio_skipped_attributes *skipped, xio_error *err) {
  return copy_attributes(from, to, 1, skipped, err);
}

int xio_copy_scale_attributes(const xio_matrix *from, const xio_matrix *to,
                              xio_skipped_attributes *skipped, xio_error *err) {
  return copy_attributes(from, to, 0, skipped, err);
}

int xio_flush(const xio_matrix *m, xio_error *err) {
  int rc = 0;
  if (H5Fflush(m->file, H5F_SCOPE_GLOBAL) < 0)
    rc = xio_fail_h5(err, "flushing %s to storage failed", m->dataset);
  return xio_agree(m->comm, rc, err);
}

int xio_data_end(const xio_matrix *m, uint64_t *bytes, xio_error *err) {
  int rc = 0;
  *bytes = 0;
  if (m->filtered) return 0; /* compressed: the size is known once written */
  if (m->chunked) { /* allocated early; a flushed file ends where its data does */
    MPI_File *handle = NULL;
    MPI_Offset size = 0;
    rc = H5Fget_vfd_handle(m->file, H5P_DEFAULT, (void **)&handle) < 0 || !handle
             ? xio_fail_h5(err, "cannot size %s's file", m->dataset)
             : XIO_MPI(MPI_File_get_size(*handle, &size), err);
    *bytes = (uint64_t)size;
  } else {
    const haddr_t offset = H5Dget_offset(m->dset);
    const hsize_t size = H5Dget_storage_size(m->dset);
    rc = offset == HADDR_UNDEF ? xio_fail_h5(err, "cannot locate %s in its file", m->dataset) : 0;
    *bytes = rc ? 0 : (uint64_t)offset + (uint64_t)size;
  }
  return xio_agree(m->comm, rc, err);
}

int xio_close(xio_matrix *m, xio_error *err) {
  if (m->comm == MPI_COMM_NULL) return 0;
  int rc = 0;
  if (m->dset >= 0 && H5Dclose(m->dset) < 0) rc = xio_fail_h5(err, "closing %s failed", m->dataset);
  xio_release(H5Tclose, &m->type, &rc, err);
  if (m->file >= 0 && H5Fclose(m->file) < 0 && rc == 0)
    rc = xio_fail_h5(err, "closing the file of %s failed", m->dataset);
  const MPI_Comm comm = m->comm;
  matrix_init(m, MPI_COMM_NULL);
  return xio_agree(comm, rc, err);
}
