/* Several HDF5 files joined along the first axis of some of their
 * datasets, seen as one: the view, as join_view.h makes one of netCDF
 * files, but an HDF5 file made with HDF5 of the first input's objects,
 * attributes and storage, each dataset joined as long as all the inputs'
 * records together.  For the inputs netCDF-C cannot join: HDF5 files
 * with axes of no netCDF dimension (matrices), netCDF-4 files with
 * groups, strings or user-defined types; and wherever --concat names
 * datasets.
 *
 * The datasets joined: those `concat` names ("/a,/g/b"), else every one
 * whose first axis is unlimited (HDF5's and netCDF-4's record
 * dimension); within each input they are as long along it (its
 * records).  Every other dataset is fixed: each input holds it with the
 * same values.  The joined datasets the run rearranges take no space in
 * the view (their values read from the inputs themselves:
 * join_source.h); the others' records are copied into it.
 *
 * Every function is local (rank 0's, with no rank holding the view
 * open), opens one input at a time beside the view and the first, and
 * returns 0, or -1 with a message naming the input(s) and the object. */
#ifndef XIO_JOIN_H5_VIEW_H
#define XIO_JOIN_H5_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"
#include "path_list.h"

/* Whether inputs whose first is at `first` are joined here rather than
 * by netCDF-C (join_view.h): 1 or 0, or -1 with a message where the
 * first cannot be read.  A netCDF-3 first input: 0. */
int xio_join_h5_wanted(const char *first, const char *concat, xio_error *err);

/* Makes (or replaces) the view of the `count` inputs at `view`: the
 * first's objects, its fixed datasets with their values, and its
 * datasets joined (their paths into *joined, which the caller frees) as
 * long as all the inputs' records (records[i]: input i's, counted), with
 * no values yet.  Attributes no copy can hold (references: h5_copy.h)
 * are said in `warning` ("" for none). */
int xio_join_h5_view_create(const char *const *inputs, int count, const char *concat,
                            const char *view, uint64_t piece_bytes, xio_path_array *joined,
                            int64_t *records, char *warning, size_t warning_size, xio_error *err);

/* In one pass over the inputs: checks that each holds the view's objects
 * with their types and shapes (the records aside), nothing more, and the
 * same values of every fixed dataset, the first difference failing it,
 * naming both files and the object; copies into the view the records of
 * the `joined` datasets but those in `skip`, in pieces of about
 * piece_bytes; records[i], input i's as the view was made, must be what
 * it holds (else it changed since).  A record coordinate (a joined 1-D
 * dimension scale) that does not increase from one input to the next is
 * said in `warning` ("" for none). */
int xio_join_h5_view_fill(const char *const *inputs, int count, const char *view,
                          const xio_path_list *joined, const xio_path_list *skip,
                          uint64_t piece_bytes, const int64_t *records, char *warning,
                          size_t warning_size, xio_error *err);

#endif
