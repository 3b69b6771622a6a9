/* The objects of a file walked, copied, compared or measured (copy_walk.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_walk.h"
#include "h5_compat.h"
#include "h5_types.h"

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

static int holds_variable_length(hid_t dataset) {
  hid_t type = H5Dget_type(dataset);
  const int variable = type >= 0 && xio_type_is_variable_length(type);
  if (type >= 0) (void)H5Tclose(type); /* only read */
  return variable;
}

hid_t xio_copy_creation(hid_t source) {
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
  hid_t dcpl = xio_copy_creation(source), type = H5I_INVALID_HID, copy = H5I_INVALID_HID;
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
    rc = xio_copy_walk_data(walk, source, copy, stored, path);
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
  if (walk->values_only) return 0;
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
    rc = xio_copy_walk_data(walk, source, copy, stored, path);
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
int xio_copy_walk_group(copy_walk *walk, hid_t source, const char *path, int exists) {
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
  const int listed = xio_path_index(walk->rearranged, path);
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
    walk->variable += variable;
    /* variable-length data is the serial walk's, and only that */
    const int ours = walk->mode == MEASURING || variable == walk->serial;
    if (rc == 0 && kind == H5I_GROUP) rc = xio_copy_walk_group(walk, object, path, exists > 0);
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
