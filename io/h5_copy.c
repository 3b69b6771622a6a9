#include "h5_copy.h"

#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_compat.h"
#include "h5_matrix.h"
#include "h5_types.h"
#include "passes.h"

enum { TARGET_BYTES = 16, PATH_BYTES = 1024 };

typedef struct {
  unsigned char target[TARGET_BYTES]; /* the object a hard link points at */
  char path[PATH_BYTES];              /* its first path, where it was copied */
  int deferred;                       /* to the walk of rank 0 alone, with its other names */
} seen_object;

typedef struct {
  MPI_Comm comm;
  int rank, nranks;
  hid_t from, to;
  const char *shown;
  const xio_path_list *rearranged;
  uint64_t budget;
  xio_copy_stats *stats;
  xio_error *err;
  seen_object *seen; /* hard-linked objects copied so far */
  int seen_count, seen_capacity;
  int failed;                                  /* the message is in err */
  enum { COPYING, COMPARING, MEASURING } mode; /* xio_copy_rest, _compare_rest, _rest_bytes */
  /* Rank 0 alone, on files it opened itself: the datasets of variable-length
   * data, which the walk of every rank leaves to it (parallel HDF5 1.10
   * writes no such data), and nothing else. */
  int serial;
  int (*stop_requested)(void); /* polled between blocks; NULL: never */
  xio_make_rearranged_fn make; /* copying: where a rearranged dataset stands */
  void *make_user;
  xio_measured_fn measured; /* measuring: each dataset to copy; NULL: none */
  void *measured_user;
  int stopped;              /* agreed by every rank: the walk returns XIO_STOPPED */
  char differs[PATH_BYTES]; /* comparing: the first copy found unlike its source, on this rank */
} copy_walk;

/* Where `path`, with its leading '/' or without (as links are visited),
 * is in `list`, or -1. */
static int path_index(const xio_path_list *list, const char *path) {
  const char *relative = path[0] == '/' ? path + 1 : path;
  for (int i = 0; i < list->count; i++) {
    const char *listed = list->paths[i][0] == '/' ? list->paths[i] + 1 : list->paths[i];
    if (strcmp(relative, listed) == 0) return i;
  }
  return -1;
}

static int grow(void **array, int *capacity, int count, size_t item) {
  if (count < *capacity) return 0;
  const int larger = *capacity ? 2 * *capacity : 64;
  void *bigger = realloc(*array, (size_t)larger * item);
  if (!bigger) return -1;
  *array = bigger;
  *capacity = larger;
  return 0;
}

static void as_target(const void *where, size_t size, unsigned char target[TARGET_BYTES]) {
  memset(target, 0, TARGET_BYTES);
  memcpy(target, where, size < TARGET_BYTES ? size : TARGET_BYTES);
}

/* The object copied first of those with this target, or NULL. */
static const seen_object *seen_before(const copy_walk *walk,
                                      const unsigned char target[TARGET_BYTES]) {
  for (int i = 0; i < walk->seen_count; i++)
    if (memcmp(walk->seen[i].target, target, TARGET_BYTES) == 0) return &walk->seen[i];
  return NULL;
}

/* netCDF-C's way: links and attributes in creation order, tracked and
 * indexed, so that netCDF-C can edit the copy. */
static hid_t group_creation(void) {
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  if (gcpl >= 0 &&
      (H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
       H5Pset_attr_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0)) {
    (void)H5Pclose(gcpl);
    return H5I_INVALID_HID;
  }
  return gcpl;
}

/* ---- data ---- */

/* The block shape: whole chunks (single elements where contiguous), grown
 * from the last axis to the first while the block fits the budget (at
 * least one chunk, which HDF5 holds whole anyway). */
static void block_shape(int ndims, const hsize_t *dims, const hsize_t *unit, size_t type_size,
                        uint64_t budget, hsize_t *block) {
  uint64_t bytes = type_size;
  for (int i = 0; i < ndims; i++) {
    block[i] = unit[i] < dims[i] ? unit[i] : dims[i];
    bytes *= block[i];
  }
  if (budget < bytes) budget = bytes;
  for (int i = ndims - 1; i >= 0; i--) {
    const uint64_t others = bytes / block[i];
    uint64_t units = budget / others / unit[i];
    if (units < 1) units = 1;
    block[i] = units * unit[i] < dims[i] ? units * unit[i] : dims[i];
    bytes = others * block[i];
    if (block[i] < dims[i]) break; /* the axes before it stay one unit deep */
  }
}

/* Block `index` of the grid of blocks in C order: its start and count. */
static void block_at(int ndims, const hsize_t *dims, const hsize_t *block, int64_t index,
                     hsize_t *start, hsize_t *count) {
  for (int i = ndims - 1; i >= 0; i--) {
    const int64_t across = (int64_t)((dims[i] + block[i] - 1) / block[i]);
    start[i] = (hsize_t)(index % across) * block[i];
    count[i] = dims[i] - start[i] < block[i] ? dims[i] - start[i] : block[i];
    index /= across;
  }
}

/* Collective.  The data of source into target (or, comparing, checked
 * against target's), blocks dealt to the ranks in turn; every rank makes
 * each collective write, empty past its blocks. */
static int move_data(copy_walk *walk, hid_t source, hid_t target, hid_t type, const char *path) {
  xio_error *err = walk->err;
  hid_t fspace = H5Dget_space(source), dcpl = H5Dget_create_plist(source);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER), mspace = H5I_INVALID_HID;
  hsize_t dims[H5S_MAX_RANK], unit[H5S_MAX_RANK], block[H5S_MAX_RANK];
  const int ndims = fspace >= 0 ? H5Sget_simple_extent_ndims(fspace) : -1;
  int rc = fspace < 0 || dcpl < 0 || dxpl < 0 || ndims < 0 ||
                   H5Sget_simple_extent_dims(fspace, dims, NULL) < 0 ||
                   H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0
               ? xio_fail_h5(err, "%s:%s: cannot read its shape", walk->shown, path)
               : 0;
  for (int i = 0; i < ndims; i++) unit[i] = 1;
  if (rc == 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, ndims, unit) != ndims)
    rc = xio_fail_h5(err, "%s:%s: cannot read its chunk shape", walk->shown, path);
  /* Variable-length data (rank 0 alone) in the native layout, pointers
   * and all, released after each block. */
  const int variable = walk->serial;
  hid_t memory = variable ? H5Tget_native_type(type, H5T_DIR_ASCEND) : H5Tcopy(type);
  if (rc == 0 && memory < 0)
    rc = xio_fail_h5(err, "%s:%s: cannot read its type", walk->shown, path);
  const size_t type_size = memory >= 0 ? H5Tget_size(memory) : 1;
  /* comparing holds a block of each file */
  uint64_t budget = walk->budget / (walk->mode == COMPARING ? 2 : 1);
  if (budget > XIO_MAX_TRANSFER_BYTES) budget = XIO_MAX_TRANSFER_BYTES;
  hssize_t points = fspace >= 0 ? H5Sget_simple_extent_npoints(fspace) : 0;
  if (rc == 0) block_shape(ndims, dims, unit, type_size, budget, block);
  int64_t blocks = points > 0 ? 1 : 0;
  uint64_t block_bytes = type_size;
  for (int i = 0; i < ndims && points > 0; i++) {
    blocks *= (int64_t)((dims[i] + block[i] - 1) / block[i]);
    block_bytes *= block[i];
  }
  unsigned char *buf =
      rc == 0 && blocks ? malloc(block_bytes * (walk->mode == COMPARING ? 2 : 1)) : NULL;
  if (rc == 0 && blocks && !buf)
    rc = xio_fail(err, "%s:%s: cannot allocate %llu bytes to copy it", walk->shown, path,
                  (unsigned long long)block_bytes);
  hid_t tspace = rc == 0 ? H5Dget_space(target) : H5I_INVALID_HID;
  if (rc == 0 && tspace < 0)
    rc = xio_fail_h5(err, "%s: cannot open the copy of %s", walk->shown, path);
  rc = xio_agree(walk->comm, rc, err);
  for (int64_t first = 0; rc == 0 && first < blocks; first += walk->nranks) {
    /* a stop asked for on any rank ends the walk between blocks, on all */
    int stop = walk->stop_requested && walk->stop_requested();
    if (XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, walk->comm), err)) {
      rc = -1;
      break;
    }
    if (stop) {
      walk->stopped = 1;
      rc = xio_fail(err, "stopped by a signal while copying %s:%s", walk->shown, path);
      break;
    }
    const int64_t mine = first + walk->rank;
    hsize_t start[H5S_MAX_RANK], count[H5S_MAX_RANK];
    if (mine < blocks) block_at(ndims, dims, block, mine, start, count);
    const hsize_t one = 1;
    mspace = mine >= blocks ? H5Screate_simple(1, &one, NULL)
             : ndims        ? H5Screate_simple(ndims, count, NULL)
                            : H5Screate(H5S_SCALAR);
    herr_t picked = mspace < 0 ? -1 : 0;
    if (mine < blocks && ndims && picked >= 0)
      picked = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
                       H5Sselect_hyperslab(tspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0
                   ? -1
                   : 0;
    if (mine >= blocks && picked >= 0)
      picked =
          H5Sselect_none(mspace) < 0 || H5Sselect_none(fspace) < 0 || H5Sselect_none(tspace) < 0
              ? -1
              : 0;
    if (picked < 0) rc = xio_fail_h5(err, "%s: cannot select a block of %s", walk->shown, path);
    const uint64_t bytes = mine < blocks ? (uint64_t)H5Sget_select_npoints(fspace) * type_size : 0;
    int read = 0, read_back = 0; /* blocks whose variable-length data is to be released */
    if (rc == 0 && bytes &&
        !(read = H5Dread(source, memory, mspace, fspace, H5P_DEFAULT, buf) >= 0))
      rc = xio_fail_h5(err, "%s: reading %s failed", walk->shown, path);
    walk->stats->bytes += bytes;
    if (walk->mode == COMPARING) {
      unsigned char *copy = buf + block_bytes;
      if (rc == 0 && bytes &&
          !(read_back = H5Dread(target, memory, mspace, tspace, H5P_DEFAULT, copy) >= 0))
        rc = xio_fail_h5(err, "reading back the copy of %s failed", path);
      if (rc == 0 && bytes && !walk->differs[0]) {
        int same = variable || memcmp(buf, copy, bytes) == 0;
        for (uint64_t at = 0; variable && same && at < bytes; at += type_size)
          same = xio_type_same_values(memory, buf + at, copy + at);
        if (!same) snprintf(walk->differs, sizeof walk->differs, "%s", path);
      }
      if (read_back && variable) (void)XIO_RECLAIM(memory, mspace, copy);
    } else {
      rc = xio_agree(walk->comm, rc, err); /* the write is collective */
      if (rc == 0 &&
          H5Dwrite(target, memory, mspace, tspace, variable ? H5P_DEFAULT : dxpl, buf) < 0)
        rc = xio_fail_h5(err, "writing the copy of %s failed", path);
    }
    if (read && variable) (void)XIO_RECLAIM(memory, mspace, buf);
    xio_release(H5Sclose, &mspace, &rc, err);
    rc = xio_agree(walk->comm, rc, err);
  }
  free(buf);
  xio_release(H5Tclose, &memory, &rc, err);
  xio_release(H5Sclose, &tspace, &rc, err);
  xio_release(H5Pclose, &dxpl, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  xio_release(H5Sclose, &fspace, &rc, err);
  return xio_agree(walk->comm, rc, err);
}

/* ---- objects ---- */

static int holds_variable_length(hid_t dataset) {
  hid_t type = H5Dget_type(dataset);
  const int variable = type >= 0 && xio_type_is_variable_length(type);
  if (type >= 0) (void)H5Tclose(type); /* only read */
  return variable;
}

/* The creation properties of source's copy: its own, but stored in the
 * output itself (compact, virtual and external storage become contiguous,
 * as parallel HDF5 writes none of them). */
static hid_t copy_creation(hid_t source) {
  hid_t dcpl = H5Dget_create_plist(source);
  if (dcpl < 0) return H5I_INVALID_HID;
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  const int external = H5Pget_external_count(dcpl);
  if (layout != H5D_COMPACT && layout != H5D_VIRTUAL && external == 0) return dcpl;
  hid_t plain = H5Pcreate(H5P_DATASET_CREATE);
  H5D_fill_value_t fill = H5D_FILL_VALUE_ERROR;
  hid_t type = H5Dget_type(source);
  size_t size = type >= 0 ? H5Tget_size(type) : 0;
  void *value = size ? calloc(1, size) : NULL;
  int ok = plain >= 0 && value && H5Pfill_value_defined(dcpl, &fill) >= 0;
  if (ok && fill == H5D_FILL_VALUE_USER_DEFINED)
    ok = H5Pget_fill_value(dcpl, type, value) >= 0 && H5Pset_fill_value(plain, type, value) >= 0;
  free(value);
  if (type >= 0) (void)H5Tclose(type);
  (void)H5Pclose(dcpl);
  if (!ok && plain >= 0) (void)H5Pclose(plain);
  return ok ? plain : H5I_INVALID_HID;
}

/* The type of the copy: a named datatype's copy (named types are made
 * before the datasets that use them, as netCDF-C makes them), else the
 * type itself. */
static hid_t copy_type(copy_walk *walk, hid_t source_type) {
  xio_object_info info;
  unsigned char target[TARGET_BYTES];
  const seen_object *named = NULL;
  if (H5Tcommitted(source_type) > 0 && XIO_OBJECT_INFO(source_type, &info) >= 0) {
    as_target(XIO_OBJECT_TARGET(&info), sizeof *XIO_OBJECT_TARGET(&info), target);
    named = seen_before(walk, target);
  }
  return named ? H5Topen2(walk->to, named->path, H5P_DEFAULT) : H5Tcopy(source_type);
}

static int copy_dataset(copy_walk *walk, hid_t source, const char *path) {
  xio_error *err = walk->err;
  hid_t stored = H5Dget_type(source), space = H5Dget_space(source);
  hid_t dcpl = copy_creation(source), type = H5I_INVALID_HID, copy = H5I_INVALID_HID;
  char why[128];
  int rc =
      stored < 0 || space < 0 || dcpl < 0
          ? xio_fail_h5(err, "%s:%s: cannot read its type, shape or storage", walk->shown, path)
          : 0;
  if (rc == 0 && xio_type_check_fixed(stored, why, sizeof why) != 0 &&
      !(walk->serial && xio_type_is_variable_length(stored)))
    rc = xio_fail(err,
                  "%s:%s holds %s: xpose cannot copy it into the output (--only writes the "
                  "rearranged datasets alone)",
                  walk->shown, path, why);
  if (rc == 0 && (type = copy_type(walk, stored)) < 0)
    rc = xio_fail_h5(err, "%s:%s: cannot copy its datatype", walk->shown, path);
  if (rc == 0 &&
      (copy = H5Dcreate2(walk->to, path, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
    rc = xio_fail_h5(err, "cannot create the copy of %s:%s", walk->shown, path);
  if (rc == 0) rc = xio_copy_object_attributes(source, copy, path, &walk->stats->skipped, err);
  H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
  if (rc == 0 && H5Dget_space_status(source, &status) < 0)
    rc = xio_fail_h5(err, "%s:%s: cannot read its storage", walk->shown, path);
  if (rc == 0) rc = xio_check_stored_in_file(walk->from, source, walk->shown, path, err);
  rc = xio_agree(walk->comm, rc, err);
  /* Never written in the input (netCDF's dimensions without coordinates):
   * nothing to copy, readers see the fill value in both. */
  if (rc == 0 && status != H5D_SPACE_STATUS_NOT_ALLOCATED)
    rc = move_data(walk, source, copy, stored, path);
  if (rc == 0) walk->stats->datasets++;
  xio_release(H5Dclose, &copy, &rc, err);
  xio_release(H5Tclose, &type, &rc, err);
  xio_release(H5Pclose, &dcpl, &rc, err);
  xio_release(H5Sclose, &space, &rc, err);
  xio_release(H5Tclose, &stored, &rc, err);
  return xio_agree(walk->comm, rc, err);
}

static int copy_members(copy_walk *walk, hid_t group, const char *path);

/* Comparing: the attributes of source's copy against its own; the first
 * that differs names the object in walk->differs. */
static int compare_attributes(copy_walk *walk, hid_t source, hid_t copy, const char *path) {
  char name[256];
  if (xio_compare_attributes(source, copy, NULL, 0, path[0] == '\0', name, sizeof name, walk->err))
    return -1;
  if (name[0] && !walk->differs[0])
    snprintf(walk->differs, sizeof walk->differs, "%.700s (attribute %s)", path[0] ? path : "/",
             name);
  return 0;
}

/* Comparing: source's copy read back against it. */
static int compare_dataset(copy_walk *walk, hid_t source, const char *path) {
  xio_error *err = walk->err;
  if (H5Lexists(walk->to, path, H5P_DEFAULT) <= 0) { /* alike on every rank */
    if (!walk->differs[0]) snprintf(walk->differs, sizeof walk->differs, "%.900s (missing)", path);
    return 0;
  }
  hid_t copy = H5Dopen2(walk->to, path, H5P_DEFAULT), stored = H5Dget_type(source);
  H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
  int rc = copy < 0 || stored < 0 || H5Dget_space_status(source, &status) < 0
               ? xio_fail_h5(err, "cannot open the copy of %s:%s", walk->shown, path)
               : 0;
  rc = xio_agree(walk->comm, rc, err);
  if (rc == 0 && status != H5D_SPACE_STATUS_NOT_ALLOCATED)
    rc = move_data(walk, source, copy, stored, path);
  if (rc == 0) rc = compare_attributes(walk, source, copy, path);
  xio_release(H5Tclose, &stored, &rc, err);
  xio_release(H5Dclose, &copy, &rc, err);
  return xio_agree(walk->comm, rc, err);
}

/* Comparing: a group's copy (its attributes, on the walk of every rank),
 * then its members. */
static int compare_group(copy_walk *walk, hid_t source, const char *path, int exists) {
  xio_error *err = walk->err;
  if (!exists && !walk->differs[0])
    snprintf(walk->differs, sizeof walk->differs, "%.900s (missing)", path);
  if (exists && !walk->serial) {
    hid_t copy = H5Gopen2(walk->to, path[0] ? path : "/", H5P_DEFAULT);
    int rc = copy < 0 ? xio_fail_h5(err, "cannot open the copy of group %s:%s", walk->shown, path)
                      : compare_attributes(walk, source, copy, path);
    xio_release(H5Gclose, &copy, &rc, err);
    if (xio_agree(walk->comm, rc, err)) return -1;
  }
  return copy_members(walk, source, path);
}

/* Copying (or measuring): a group's copy, made where `to` lacks it, then
 * its members; the root group (path "") exists. */
static int copy_group(copy_walk *walk, hid_t source, const char *path, int exists) {
  xio_error *err = walk->err;
  if (walk->mode == COMPARING) return compare_group(walk, source, path, exists);
  if (walk->mode != COPYING) return copy_members(walk, source, path);
  hid_t gcpl = exists ? H5I_INVALID_HID : group_creation();
  hid_t copy = exists      ? H5Gopen2(walk->to, path[0] ? path : "/", H5P_DEFAULT)
               : gcpl >= 0 ? H5Gcreate2(walk->to, path, H5P_DEFAULT, gcpl, H5P_DEFAULT)
                           : H5I_INVALID_HID;
  int rc =
      copy < 0 ? xio_fail_h5(err, "cannot create the copy of group %s:%s", walk->shown, path) : 0;
  if (rc == 0 && !exists)
    rc = xio_copy_object_attributes(source, copy, path, &walk->stats->skipped, err);
  if (rc == 0 && !exists) walk->stats->groups++;
  xio_release(H5Gclose, &copy, &rc, err);
  xio_release(H5Pclose, &gcpl, &rc, err);
  if (xio_agree(walk->comm, rc, err)) return -1;
  return copy_members(walk, source, path);
}

/* A soft or external link, made again as it is. */
static int copy_link(copy_walk *walk, hid_t group, const char *name, const xio_link_info *info,
                     const char *path) {
  xio_error *err = walk->err;
  char *value = malloc(info->u.val_size + 1);
  const char *file = NULL, *object = NULL;
  unsigned flags = 0;
  int rc = !value || H5Lget_val(group, name, value, info->u.val_size, H5P_DEFAULT) < 0
               ? xio_fail_h5(err, "%s:%s: cannot read the link", walk->shown, path)
               : 0;
  if (rc == 0 && info->type == H5L_TYPE_SOFT &&
      H5Lcreate_soft(value, walk->to, path, H5P_DEFAULT, H5P_DEFAULT) < 0)
    rc = xio_fail_h5(err, "cannot copy the link %s:%s", walk->shown, path);
  if (rc == 0 && info->type == H5L_TYPE_EXTERNAL &&
      (H5Lunpack_elink_val(value, info->u.val_size, &flags, &file, &object) < 0 ||
       H5Lcreate_external(file, object, walk->to, path, H5P_DEFAULT, H5P_DEFAULT) < 0))
    rc = xio_fail_h5(err, "cannot copy the external link %s:%s", walk->shown, path);
  if (rc == 0 && info->type != H5L_TYPE_SOFT && info->type != H5L_TYPE_EXTERNAL)
    rc = xio_fail(err, "%s:%s is a user-defined link, which xpose cannot copy", walk->shown, path);
  free(value);
  if (rc == 0) walk->stats->links++;
  return rc;
}

typedef struct {
  copy_walk *walk;
  const char *parent;
} member_visit;

/* Measuring: what a dataset to copy takes in the input. */
static void measure_dataset(copy_walk *walk, hid_t dataset, const char *path) {
  const uint64_t bytes = H5Dget_storage_size(dataset); /* 0 where never written */
  walk->stats->bytes += bytes;
  walk->stats->datasets++;
  if (walk->measured) walk->measured(path, bytes, walk->measured_user);
}

static herr_t visit_member(hid_t group, const char *name, const xio_link_info *info, void *data) {
  const member_visit *visit = data;
  copy_walk *walk = visit->walk;
  xio_error *err = walk->err;
  char path[PATH_BYTES];
  if (snprintf(path, sizeof path, "%s/%s", visit->parent, name) >= (int)sizeof path) {
    xio_fail(err, "%s: the path %.64s/%.64s... is too long", walk->shown, visit->parent, name);
    walk->failed = 1;
    return -1;
  }
  const int listed = path_index(walk->rearranged, path);
  int rc = 0;
  const htri_t exists = walk->to >= 0 ? H5Lexists(walk->to, path, H5P_DEFAULT) : 0;
  if (listed >= 0) {                                        /* rearranged by the run */
    if (walk->mode == COPYING && walk->make && exists <= 0) /* made here: the input's order */
      rc = walk->make(walk->make_user, listed, err);
    if (xio_agree(walk->comm, rc, err)) walk->failed = 1;
    return walk->failed ? -1 : 0;
  }
  if (info->type != H5L_TYPE_HARD) {
    if (exists <= 0 && walk->mode == COPYING) rc = copy_link(walk, group, name, info, path);
  } else {
    unsigned char target[TARGET_BYTES];
    as_target(XIO_LINK_TARGET(info), sizeof *XIO_LINK_TARGET(info), target);
    const seen_object *first = seen_before(walk, target);
    hid_t object = H5I_INVALID_HID;
    if (first && first->deferred) { /* another name of a dataset left to rank 0 */
    } else if (first && exists <= 0 && walk->mode == COPYING) { /* another name of a copy */
      if (H5Lcreate_hard(walk->to, first->path, walk->to, path, H5P_DEFAULT, H5P_DEFAULT) < 0)
        rc = xio_fail_h5(err, "cannot link %s to %s in the output", path, first->path);
      else
        walk->stats->links++;
    } else if (!first) {
      if (grow((void **)&walk->seen, &walk->seen_capacity, walk->seen_count, sizeof *walk->seen)) {
        rc = xio_fail(err, "cannot list the objects copied");
      } else {
        seen_object *entry = &walk->seen[walk->seen_count++];
        memcpy(entry->target, target, TARGET_BYTES);
        snprintf(entry->path, sizeof entry->path, "%s", path);
      }
      object = rc == 0 ? H5Oopen(group, name, H5P_DEFAULT) : H5I_INVALID_HID;
      if (rc == 0 && object < 0) rc = xio_fail_h5(err, "%s:%s: cannot open it", walk->shown, path);
    }
    rc = xio_agree(walk->comm, rc, err);
    const H5I_type_t kind = object >= 0 ? H5Iget_type(object) : H5I_BADID;
    const int variable = kind == H5I_DATASET && holds_variable_length(object);
    if (object >= 0) walk->seen[walk->seen_count - 1].deferred = variable && !walk->serial;
    /* variable-length data is the serial walk's, and only that */
    const int ours = walk->mode == MEASURING || variable == walk->serial;
    if (rc == 0 && kind == H5I_GROUP) rc = copy_group(walk, object, path, exists > 0);
    if (rc == 0 && kind == H5I_DATASET && walk->mode == COMPARING && ours)
      rc = compare_dataset(walk, object, path);
    else if (rc == 0 && kind == H5I_DATASET && walk->mode == MEASURING && exists <= 0)
      measure_dataset(walk, object, path);
    else if (rc == 0 && kind == H5I_DATASET && walk->mode == COPYING && exists <= 0 && ours)
      rc = copy_dataset(walk, object, path);
    if (rc == 0 && kind == H5I_DATATYPE && exists <= 0 && walk->mode == COPYING) {
      /* a named datatype: metadata alone, which H5Ocopy makes on every rank alike */
      if (H5Ocopy(group, name, walk->to, path, H5P_DEFAULT, H5P_DEFAULT) < 0)
        rc = xio_fail_h5(err, "cannot copy the named datatype %s:%s", walk->shown, path);
    }
    if (object >= 0 && H5Oclose(object) < 0 && rc == 0)
      rc = xio_fail_h5(err, "%s:%s: cannot close it", walk->shown, path);
  }
  if (xio_agree(walk->comm, rc, err)) {
    walk->failed = 1;
    return -1;
  }
  return 0;
}

/* Every member of `group` (at `path`, "" for the root), in creation order
 * where the input kept it. */
static int copy_members(copy_walk *walk, hid_t group, const char *path) {
  unsigned order = 0;
  hid_t gcpl = H5Gget_create_plist(group);
  if (gcpl < 0 || H5Pget_link_creation_order(gcpl, &order) < 0) order = 0;
  if (gcpl >= 0) (void)H5Pclose(gcpl); /* only read */
  const H5_index_t by = order & H5P_CRT_ORDER_INDEXED ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
  member_visit visit = {walk, path};
  hsize_t index = 0;
  int rc = 0;
  if (XIO_LINK_ITERATE(group, by, H5_ITER_INC, &index, visit_member, &visit) < 0 && !walk->failed)
    rc = xio_fail_h5(walk->err, "%s:%s/: cannot list its members", walk->shown, path);
  return walk->failed ? -1 : xio_agree(walk->comm, rc, walk->err);
}

/* ---- dimension scales ---- */

typedef struct {
  hid_t to, copy;
} scale_attach;

static herr_t attach_scale(hid_t dset, unsigned axis, hid_t scale, void *data) {
  (void)dset;
  scale_attach *attach = data;
  char path[PATH_BYTES];
  if (H5Iget_name(scale, path, sizeof path) <= 0) return -1;
  hid_t copy = H5Dopen2(attach->to, path, H5P_DEFAULT);
  if (copy < 0) return -1;
  herr_t status = H5DSis_attached(attach->copy, copy, axis) > 0
                      ? 0
                      : H5DSattach_scale(attach->copy, copy, axis);
  if (H5Dclose(copy) < 0) status = -1;
  return status;
}

static int walk_rest(copy_walk *walk) {
  if (XIO_MPICHECK(MPI_Comm_rank(walk->comm, &walk->rank), walk->err) ||
      XIO_MPICHECK(MPI_Comm_size(walk->comm, &walk->nranks), walk->err))
    return -1;
  hid_t root = H5Gopen2(walk->from, "/", H5P_DEFAULT);
  int rc = root < 0 ? xio_fail_h5(walk->err, "%s: cannot open its root group", walk->shown) : 0;
  rc = xio_agree(walk->comm, rc, walk->err);
  if (rc == 0) rc = copy_group(walk, root, "", 1);
  xio_release(H5Gclose, &root, &rc, walk->err);
  free(walk->seen);
  if (xio_agree(walk->comm, rc, walk->err)) return walk->stopped ? XIO_STOPPED : -1;
  return XIO_MPICHECK(
      MPI_Allreduce(MPI_IN_PLACE, &walk->stats->bytes, 1, MPI_UINT64_T, MPI_SUM, walk->comm),
      walk->err);
}

/* A walk of `from` against `to`, its stats zeroed. */
static copy_walk new_walk(MPI_Comm comm, hid_t from, hid_t to, const char *shown,
                          const xio_path_list *rearranged, uint64_t budget, int mode,
                          xio_copy_stats *stats, xio_error *err) {
  memset(stats, 0, sizeof *stats);
  copy_walk walk = {.comm = comm,
                    .from = from,
                    .to = to,
                    .shown = shown,
                    .rearranged = rearranged,
                    .budget = budget,
                    .stats = stats,
                    .err = err,
                    .mode = mode};
  return walk;
}

int xio_copy_rest(MPI_Comm comm, hid_t from, hid_t to, const char *shown,
                  const xio_path_list *rearranged, xio_make_rearranged_fn make, void *make_user,
                  uint64_t budget, int (*stop_requested)(void), xio_copy_stats *stats,
                  xio_error *err) {
  copy_walk walk = new_walk(comm, from, to, shown, rearranged, budget, COPYING, stats, err);
  walk.stop_requested = stop_requested;
  walk.make = make;
  walk.make_user = make_user;
  return walk_rest(&walk);
}

/* Rank 0: `file` (open on every rank) opened again by this rank alone,
 * with HDF5's serial driver. */
static hid_t open_alone(hid_t file, unsigned flags, xio_error *err) {
  char path[4096];
  const ssize_t length = H5Fget_name(file, path, sizeof path);
  if (length <= 0 || length >= (ssize_t)sizeof path) {
    xio_fail_h5(err, "cannot name a file to open it again");
    return H5I_INVALID_HID;
  }
  const hid_t alone = H5Fopen(path, flags, H5P_DEFAULT);
  if (alone < 0) xio_fail_h5(err, "%s: cannot open it on one rank", path);
  return alone;
}

/* Rank 0: the walk of the datasets of variable-length data (copy_walk's
 * `serial`), over files it opened alone. */
static int walk_alone(hid_t from, hid_t to, const char *shown, const xio_path_list *rearranged,
                      uint64_t budget, int mode, xio_copy_stats *stats, char *differs, size_t size,
                      xio_error *err) {
  copy_walk walk = new_walk(MPI_COMM_SELF, from, to, shown, rearranged, budget, mode, stats, err);
  walk.serial = 1;
  const int rc = walk_rest(&walk);
  if (differs) snprintf(differs, size, "%s", walk.differs);
  return rc;
}

/* Rank 0: the variable-length data of `from` compared with its copies in
 * `to`, both open on every rank, reopened by it alone. */
static int compare_alone(hid_t from, hid_t to, const char *shown, const xio_path_list *rearranged,
                         uint64_t budget, xio_copy_stats *stats, char *differs, size_t size,
                         xio_error *err) {
  hid_t from_alone = open_alone(from, H5F_ACC_RDONLY, err);
  hid_t to_alone = from_alone >= 0 ? open_alone(to, H5F_ACC_RDONLY, err) : H5I_INVALID_HID;
  int rc = to_alone < 0 ? -1
                        : walk_alone(from_alone, to_alone, shown, rearranged, budget, COMPARING,
                                     stats, differs, size, err);
  xio_release(H5Fclose, &to_alone, &rc, err);
  xio_release(H5Fclose, &from_alone, &rc, err);
  return rc;
}

int xio_compare_rest(MPI_Comm comm, hid_t from, hid_t to, const char *shown,
                     const xio_path_list *rearranged, uint64_t budget, int (*stop_requested)(void),
                     char *differs, size_t size, uint64_t *bytes, xio_error *err) {
  xio_copy_stats stats, alone;
  copy_walk walk = new_walk(comm, from, to, shown, rearranged, budget, COMPARING, &stats, err);
  walk.stop_requested = stop_requested;
  const int walked = walk_rest(&walk);
  if (walked) return walked;
  /* the datasets of variable-length data, by rank 0 alone */
  char differs_alone[PATH_BYTES] = "";
  memset(&alone, 0, sizeof alone);
  const int rc = walk.rank == 0 ? compare_alone(from, to, shown, rearranged, budget, &alone,
                                                differs_alone, sizeof differs_alone, err)
                                : 0;
  if (xio_agree(comm, rc, err) ||
      XIO_MPICHECK(MPI_Bcast(differs_alone, (int)sizeof differs_alone, MPI_CHAR, 0, comm), err) ||
      XIO_MPICHECK(MPI_Bcast(&alone.bytes, 1, MPI_UINT64_T, 0, comm), err))
    return -1;
  *bytes = stats.bytes + alone.bytes;
  /* the lowest rank that found a difference names it */
  int mine = walk.differs[0] ? walk.rank : walk.nranks, first = walk.nranks;
  if (XIO_MPICHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), err)) return -1;
  if (first < walk.nranks &&
      XIO_MPICHECK(MPI_Bcast(walk.differs, (int)sizeof walk.differs, MPI_CHAR, first, comm), err))
    return -1;
  snprintf(differs, size, "%s", first < walk.nranks ? walk.differs : differs_alone);
  return 0;
}

int xio_rest_bytes(MPI_Comm comm, hid_t from, hid_t to, const char *shown,
                   const xio_path_list *rearranged, xio_measured_fn measured, void *user,
                   uint64_t *bytes, xio_error *err) {
  xio_copy_stats stats;
  copy_walk walk = new_walk(comm, from, to, shown, rearranged, 0, MEASURING, &stats, err);
  walk.measured = measured;
  walk.measured_user = user;
  if (walk_rest(&walk)) return -1;
  *bytes = stats.bytes / (uint64_t)walk.nranks; /* every rank counted them all */
  return 0;
}

typedef struct {
  hid_t to;
  const xio_path_list *rearranged;
  xio_error *err;
} attach_visit;

static herr_t attach_to_copy(hid_t group, const char *name, const xio_link_info *info, void *data) {
  const attach_visit *visit = data;
  if (info->type != H5L_TYPE_HARD || path_index(visit->rearranged, name) >= 0) return 0;
  hid_t source = H5Oopen(group, name, H5P_DEFAULT);
  if (source < 0) return xio_fail_h5(visit->err, "cannot open %s", name);
  herr_t status = 0;
  if (H5Iget_type(source) == H5I_DATASET && H5Aexists(source, "DIMENSION_LIST") > 0 &&
      H5Lexists(visit->to, name, H5P_DEFAULT) > 0) {
    hid_t space = H5Dget_space(source);
    const int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    scale_attach attach = {visit->to, H5Dopen2(visit->to, name, H5P_DEFAULT)};
    status = attach.copy < 0 || ndims < 0 ? -1 : 0;
    for (int axis = 0; axis < ndims && status >= 0; axis++)
      if (H5DSget_num_scales(source, (unsigned)axis) > 0 &&
          H5DSiterate_scales(source, (unsigned)axis, NULL, attach_scale, &attach) < 0)
        status = -1;
    if (attach.copy >= 0 && H5Dclose(attach.copy) < 0) status = -1;
    if (space >= 0 && H5Sclose(space) < 0) status = -1;
    if (status < 0)
      xio_fail_h5(visit->err, "cannot attach the dimension scales of /%s's copy", name);
  }
  if (H5Oclose(source) < 0 && status >= 0)
    status = xio_fail_h5(visit->err, "cannot close %s", name);
  return status;
}

int xio_finish_rest(hid_t from, const char *to_path, const char *shown,
                    const xio_path_list *rearranged, uint64_t budget, xio_copy_stats *stats,
                    xio_error *err) {
  memset(stats, 0, sizeof *stats);
  hid_t from_alone = open_alone(from, H5F_ACC_RDONLY, err);
  if (from_alone < 0) return -1;
  hid_t to = H5Fopen(to_path, H5F_ACC_RDWR, H5P_DEFAULT);
  int rc =
      to < 0 ? xio_fail_h5(err, "cannot open %s", to_path)
             : walk_alone(from_alone, to, shown, rearranged, budget, COPYING, stats, NULL, 0, err);
  attach_visit visit = {to, rearranged, err};
  err->message[0] = '\0';
  if (rc == 0 &&
      XIO_LINK_VISIT(from_alone, H5_INDEX_NAME, H5_ITER_INC, attach_to_copy, &visit) < 0) {
    if (!err->message[0]) xio_fail_h5(err, "cannot list the datasets to attach scales to");
    rc = -1;
  }
  xio_release(H5Fclose, &to, &rc, err);
  xio_release(H5Fclose, &from_alone, &rc, err);
  return rc;
}
