/* The rest of the input file, copied into the output beside the
 * rearranged datasets, as ncpdq and h5repack copy whole files.
 *
 * Every group, dataset, named datatype and link of the input that the
 * output does not have yet is made at the same path, with the same
 * attributes, in the input's creation order.  Datasets keep their type,
 * shape (unlimited axes stay unlimited), chunks, filters and fill value;
 * their data moves in blocks of whole chunks that fit the budget, the
 * ranks taking blocks in turn, so each chunk is read and written once, by
 * one rank.  Datasets of variable-length data, and the dimension scales
 * of the copies, are made afterwards by rank 0 alone (xio_finish_rest). */
#ifndef XIO_COPY_H
#define XIO_COPY_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "h5_attributes.h"
#include "h5_error.h"
#include "path_list.h"

typedef struct {
  int groups, datasets, links; /* made: links are soft, external and extra hard links */
  uint64_t bytes;              /* of data copied */
  xio_skipped_attributes skipped;
} xio_copy_stats;

/* Collective, where the walk of xio_copy_rest meets rearranged dataset
 * `index` (of its list) and `to` lacks it: makes it there, so that the
 * output keeps the input's creation order.  0, or -1 with a message. */
typedef int (*xio_make_rearranged_fn)(void *user, int index, xio_error *err);

/* Collective.  Copies what `from` (the input file) has and `to` (the
 * output file) lacks, but for the datasets `rearranged` (`make`, unless
 * NULL, makes them in their place) and those of variable-length data
 * (xio_finish_rest's).  budget: bytes of buffer per rank.  A dataset of
 * references (which point into `from`) fails the call, naming it; `shown`
 * names the input file in messages.  stop_requested (NULL: none) is
 * polled between blocks: a stop any rank sees returns XIO_STOPPED on all,
 * the copy unfinished. */
int xio_copy_rest(MPI_Comm comm, hid_t from, hid_t to, const char *shown,
                  const xio_path_list *rearranged, xio_make_rearranged_fn make, void *make_user,
                  uint64_t budget, int (*stop_requested)(void), xio_copy_stats *stats,
                  xio_error *err);

/* Rank 0 alone, with the output (at to_path) closed on every rank, and
 * `from` reopened by it with HDF5's serial driver: copies the datasets of
 * variable-length data (strings, sequences), which parallel HDF5 cannot
 * write and xio_copy_rest leaves out, then attaches to each copy the
 * dimension scales its source has, at the same paths, as serial HDF5 does.
 * Attached in parallel, the first attachment to a copy of a 19400-record
 * netCDF file failed on one rank of two and not on the other (HDF5
 * 1.10.8), and the ranks' metadata parted ways.  *stats: what it copied. */
int xio_finish_rest(hid_t from, const char *to_path, const char *shown,
                    const xio_path_list *rearranged, uint64_t budget, xio_copy_stats *stats,
                    xio_error *err);

/* Local.  Whether the datasets of `from` but those in `skip` hold the
 * same values in `to` (their attributes aside), both files this rank's
 * alone: *differs is "" when all do, else the path of one that does not
 * ("(missing)" after it where `to` lacks it). */
int xio_compare_values(hid_t from, hid_t to, const char *shown, const xio_path_list *skip,
                       uint64_t budget, char *differs, size_t size, xio_error *err);

/* Local.  The creation properties of a copy of dataset `source`: its
 * own, but stored in the file itself (compact, virtual and external
 * storage become contiguous, as parallel HDF5 writes none of them).  To
 * be closed; H5I_INVALID_HID where they cannot be read. */
hid_t xio_copy_creation(hid_t source);

/* Called for each dataset to copy, on every rank: its path and the bytes
 * it takes in the input. */
typedef void (*xio_measured_fn)(const char *path, uint64_t bytes, void *user);

/* Collective.  The bytes xio_copy_rest will write into `to` (H5I_INVALID_HID:
 * an output not made yet): the storage the datasets to copy take in `from`
 * (compressed ones as compressed), each of them given to `measured` (NULL:
 * none) too. */
int xio_rest_bytes(MPI_Comm comm, hid_t from, hid_t to, const char *shown,
                   const xio_path_list *rearranged, xio_measured_fn measured, void *user,
                   uint64_t *bytes, xio_error *err);

/* Collective.  Reads every dataset xio_copy_rest and xio_finish_rest
 * copied (those of `from` but `rearranged`; variable-length data by rank 0
 * alone) back from `to` and compares it with its source, stopping as
 * xio_copy_rest does:
 * *differs is "" when all match, else the path of one that does not.
 * *bytes: the data compared, of each file. */
int xio_compare_rest(MPI_Comm comm, hid_t from, hid_t to, const char *shown,
                     const xio_path_list *rearranged, uint64_t budget, int (*stop_requested)(void),
                     char *differs, size_t size, uint64_t *bytes, xio_error *err);

#endif
