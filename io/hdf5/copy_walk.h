/* The walk of a file's objects that h5_copy.h's functions make, shared
 * by its parts: the objects (copy_objects.c) and their data in blocks
 * (copy_data.c). */
#ifndef XIO_COPY_WALK_H
#define XIO_COPY_WALK_H

#include "h5_copy.h"

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
  int values_only;          /* comparing: the datasets' values alone, no attributes */
  int variable;             /* datasets of variable-length data met */
} copy_walk;

/* Collective.  The group `source` at `path` and what it holds, walked as
 * the walk's mode says (`exists`: its copy is there already). */
int xio_copy_walk_group(copy_walk *walk, hid_t source, const char *path, int exists);

/* Collective.  The data of source into target (or, comparing, checked
 * against target's), blocks dealt to the ranks in turn; every rank makes
 * each collective write, empty past its blocks. */
int xio_copy_walk_data(copy_walk *walk, hid_t source, hid_t target, hid_t type, const char *path);

#endif
