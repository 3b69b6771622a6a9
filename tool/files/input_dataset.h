/* Which datasets of the input --dims rearranges, and whether the names it
 * gives are the file's. */
#ifndef TOOL_INPUT_DATASET_H
#define TOOL_INPUT_DATASET_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>

#include "h5_error.h"
#include "path_list.h"

typedef char tool_dataset_name[512];

/* The datasets a run rearranges, by path ("/tas"). */
typedef struct {
  int count;
  tool_dataset_name *paths; /* malloc'd: tool_dataset_list_free */
} tool_dataset_list;

/* Collective; rank 0 reads the file.  Checks that every name of `dims`
 * and of `chunks` (--chunks; either may be NULL) names an axis of some
 * dataset of `path`, called `shown` in messages (a misspelt name is an
 * error, as ncpdq's; a named dataset that is not there fails with those
 * that are), and fills *list: with `dataset` alone where it is not "";
 * with `joined` (not NULL: inputs joined alone), with every dataset of 2
 * or more axes it lists; with nothing named, with the file's one dataset
 * of 2 or more axes that is not auxiliary (h5_scales.h; several fail,
 * listed); else with every dataset whose axes `dims` reorders
 * (tool_axes_by_names), as ncpdq rearranges every variable with the
 * named dimensions, and with `chunks` every dataset of 2 or more axes
 * that has an axis either names (those it does not reorder are
 * rechunked).  0; or -1 with one message, *usage set where the command
 * line is at fault (none to rearrange, several to choose from; an
 * unknown name). */
int tool_choose_input_datasets(MPI_Comm comm, const char *path, const char *shown, const char *dims,
                               const char *chunks, const xio_path_list *joined, const char *dataset,
                               tool_dataset_list *list, int *usage, xio_error *err);

/* Collective.  Rank 0's `count` paths given to every rank: *paths (with
 * room for them) on the others, malloc'd by this call. */
int tool_share_paths(MPI_Comm comm, char (**paths)[512], int count, xio_error *err);

/* Local.  A list of `dataset` alone; -1 when out of memory. */
int tool_dataset_list_of_one(const char *dataset, tool_dataset_list *list);

void tool_dataset_list_free(tool_dataset_list *list);

/* Collective, `file` (the input, shown as `shown`) open on every rank.
 * Fails, as a usage error, where `output` (the output dataset the command
 * line names) is another object of the input than `dataset`, the one the
 * run rearranges, or lies under one that is not a group: the copy of the
 * rest of the file would put two objects at one path. */
int tool_check_output_path_free(MPI_Comm comm, hid_t file, const char *shown, const char *dataset,
                                const char *output, xio_error *err);

#endif
