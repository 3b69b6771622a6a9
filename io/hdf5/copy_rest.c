/* The rest of a file copied, compared or measured (h5_copy.h): a walk of
 * its objects (copy_walk.h) on every rank, then one of rank 0 alone for
 * variable-length data; dimension scales attached to the copies last. */
#include "h5_copy.h"

#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_walk.h"
#include "h5_compat.h"

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
  if (rc == 0) rc = xio_copy_walk_group(walk, root, "", 1);
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

int xio_compare_values(hid_t from, hid_t to, const char *shown, const xio_path_list *skip,
                       uint64_t budget, char *differs, size_t size, xio_error *err) {
  xio_copy_stats stats;
  differs[0] = '\0';
  /* the fixed-size data, then the variable-length (the serial walk's), if any */
  for (int serial = 0, variable = 1; serial < 2 && variable && !differs[0]; serial++) {
    copy_walk walk = new_walk(MPI_COMM_SELF, from, to, shown, skip, budget, COMPARING, &stats, err);
    walk.serial = serial;
    walk.values_only = 1;
    if (walk_rest(&walk)) return -1;
    snprintf(differs, size, "%s", walk.differs);
    variable = walk.variable;
  }
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
  if (info->type != H5L_TYPE_HARD || xio_path_index(visit->rearranged, name) >= 0) return 0;
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
