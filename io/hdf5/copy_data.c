/* A dataset's data copied or compared in blocks that fit the budget (copy_walk.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_walk.h"
#include "h5_compat.h"
#include "h5_types.h"

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

/* Whether `object`'s file is open through MPI-IO. */
static int through_mpi_io(hid_t object) {
  const hid_t file = H5Iget_file_id(object);
  const hid_t fapl = file >= 0 ? H5Fget_access_plist(file) : H5I_INVALID_HID;
  const int mpi_io = fapl >= 0 && H5Pget_driver(fapl) == H5FD_MPIO;
  if (fapl >= 0) (void)H5Pclose(fapl); /* only read */
  if (file >= 0) (void)H5Fclose(file);
  return mpi_io;
}

int xio_copy_walk_data(copy_walk *walk, hid_t source, hid_t target, hid_t type, const char *path) {
  xio_error *err = walk->err;
  hid_t fspace = H5Dget_space(source), dcpl = H5Dget_create_plist(source);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER), mspace = H5I_INVALID_HID;
  hsize_t dims[H5S_MAX_RANK], unit[H5S_MAX_RANK], block[H5S_MAX_RANK];
  const int ndims = fspace >= 0 ? H5Sget_simple_extent_ndims(fspace) : -1;
  int rc = fspace < 0 || dcpl < 0 || dxpl < 0 || ndims < 0 ||
                   H5Sget_simple_extent_dims(fspace, dims, NULL) < 0 ||
                   /* a file of HDF5's POSIX driver (one rank's) has no collective writes */
                   (through_mpi_io(target) && H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0)
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
