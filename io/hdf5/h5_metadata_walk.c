/* Every piece of an HDF5 file's metadata that xpose reads, read once
 * (h5_metadata_walk.h). */
#include "h5_metadata_walk.h"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdlib.h>

#include "h5_compat.h"

/* Datasets read whole by the walk: those of the rest of a file that the
 * run copies through HDF5 (coordinates, bounds), not the ones it moves. */
#define SMALL_DATASET ((uint64_t)4 << 20)

/* An attribute's values read in their own type, vlen ones reclaimed (a
 * variable-length string's bytes lie in the global heap). */
static herr_t read_attribute(hid_t object, const char *name, const H5A_info_t *info, void *data) {
  (void)info, (void)data;
  const hid_t a = H5Aopen(object, name, H5P_DEFAULT);
  const hid_t type = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
  const hid_t space = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
  const hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  const size_t size = type >= 0 ? H5Tget_size(type) : 0;
  void *values =
      n > 0 && size && (uint64_t)n * size < ((uint64_t)1 << 28) ? calloc((size_t)n, size) : NULL;
  if (values && H5Aread(a, type, values) >= 0) (void)XIO_RECLAIM(type, space, values);
  free(values);
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  if (a >= 0) H5Aclose(a);
  return 0; /* errors are the run's to report, in its own words */
}

static herr_t scale_name(hid_t dset, unsigned axis, hid_t scale, void *data) {
  (void)dset, (void)axis, (void)data;
  char name[256];
  (void)H5DSget_scale_name(scale, name, sizeof name);
  return 0;
}

/* A dataset's type, shape, storage and dimension scales, as the tool
 * reads them. */
static void read_dataset(hid_t dset) {
  const hid_t type = H5Dget_type(dset), space = H5Dget_space(dset);
  const hid_t dcpl = H5Dget_create_plist(dset);
  const int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  if (H5Aexists(dset, "DIMENSION_LIST") > 0)
    for (int axis = 0; axis < ndims; axis++)
      if (H5DSget_num_scales(dset, (unsigned)axis) > 0)
        (void)H5DSiterate_scales(dset, (unsigned)axis, NULL, scale_name, NULL);
  if (dcpl >= 0) {
    hsize_t chunk[H5S_MAX_RANK];
    (void)H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
    (void)H5Pget_nfilters(dcpl);
    H5Pclose(dcpl);
  }
  /* a small dataset's values: the rest of a file, copied through HDF5 */
  const hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  const size_t size = type >= 0 ? H5Tget_size(type) : 0;
  void *values =
      n > 0 && size && (uint64_t)n * size <= SMALL_DATASET ? malloc((size_t)n * size) : NULL;
  if (values && H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0)
    (void)XIO_RECLAIM(type, space, values);
  free(values);
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
}

static herr_t visit(hid_t file, const char *name, const xio_object_info *info, void *data) {
  (void)data;
  const hid_t object = H5Oopen(file, name, H5P_DEFAULT);
  if (object < 0) return 0;
  (void)H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, read_attribute, NULL);
  if (info->type == H5O_TYPE_DATASET) read_dataset(object);
  H5Oclose(object);
  return 0;
}

int xio_h5_metadata_walk(const char *path) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return -1;
#if H5_VERSION_GE(1, 12, 0)
  const herr_t walked = H5Ovisit3(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit, NULL, H5O_INFO_BASIC);
#else
  const herr_t walked = H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit, NULL, H5O_INFO_BASIC);
#endif
  H5Fclose(file);
  return walked < 0 ? -1 : 0;
}
