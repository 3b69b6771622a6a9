/* One run of xpose: the state its steps share (the datasets it moves,
 * their moves, the partial output and its record), and small facts
 * derived from it. */
#ifndef TOOL_RUN_H
#define TOOL_RUN_H

#include "axes.h"
#include "h5_copy.h"
#include "h5_matrix.h"
#include "input_dataset.h"
#include "options.h"
#include "output_file.h"
#include "output_kind.h"
#include "resume_record.h"
#include "xpose.h"

_Static_assert(TOOL_MAX_MOVES - 1 == TOOL_SCRATCH_FILES,
               "a scratch file for each move but the last");

typedef struct {
  char file[4096], dataset[512];
} dataset_path;

/* A dataset moved by the run, as its summary lists it. */
typedef struct {
  char dataset[512], in_shape[512], out_shape[512];
  double seconds;
} tool_dataset_done;

/* One run of xpose: what its steps share. */
typedef struct transpose_run {
  const tool_options *opt;
  const tool_output_kind *kind; /* of OUT: HDF5's or Zarr's */
  /* Zarr: each rearranged dataset's array, as made (path relative to the
   * store); every rank's. */
  xio_zarr_array *zarr_arrays;
  int store_format; /* `xpose verify`'s store's Zarr format (else --zarr-format's) */
  uint64_t wrote_bytes, wrote_files; /* this rank's chunk (or shard) files of the store */
  MPI_Comm comm;
  int rank, nranks;
  dataset_path in_path, out_path;
  /* The input files: the first (in_path.file), then the others, joined
   * along their records (input_view.h) where there are several. */
  const char **input_files;
  int input_count;
  int64_t *records;       /* joined: each input's records */
  char input_shown[1024]; /* the input(s) as messages name them */
  int joined;
  /* joined with nothing to rearrange: the records moved into the
   * first input's chunks, every dataset joined of 2 or more axes
   * through the passes */
  int join_only;
  /* how the input is read: through a view (input_reader.h); NULL: as it is */
  const struct tool_input_reader *reader;
  xio_path_array joined_datasets; /* every rank: the view's datasets joined along the records */
  int view_made;                  /* rank 0: that view is this run's, to remove */
  char **store_views;             /* rank 0: each Zarr store joined, its own view, made */
  int store_view_count;
  tool_dataset_list rearranged;   /* the input's datasets the run moves, one after the other */
  int dataset_index;              /* which of them is in `in` (and in `out`, while moving) */
  uint64_t moved_bytes;           /* of the datasets moved before it */
  int64_t moved_passes;
  tool_dataset_done *done; /* rank 0: the datasets this run moved (summary.h) */
  int done_count;
  xio_matrix in, out;
  char in_shape[512], out_shape[512]; /* "time x lat x lon (12 x 180 x 360)" */
  /* The order of the dataset in `in` (order[i]: its axis that becomes the
   * output's axis i), and the moves that make it (tool_axes_plan): where
   * there are several, each but the last writes a scratch file beside the
   * output, "OUT.xpose-scratch-J", which the next reads; the record says
   * which move it is at. */
  int order[XIO_MAX_DIMS];
  int reversed;     /* N-D with no order given: numpy's .T */
  int scratch_lost; /* a scratch file read back wrong: nothing to keep */
  int moves, move;
  tool_move folds[TOOL_MAX_MOVES];
  xio_matrix scratch[2]; /* move j writes scratch[j % 2]; move j + 1 reads it */
  xio_matrix *src, *dst; /* the move's: `in` or a scratch; a scratch or `out` */
  tool_output_file output;
  tool_resume_record record; /* identity and progress of the partial output */
  int resumed;
  int output_read_back; /* every pass was resumed and read back: no second read-back */
  int stopped;          /* by a signal, outside the passes */
  int input_changed;    /* rank 0: the input is not the file that was read */
  int compressed;       /* the output's space could not be reserved ahead */
  int noted_unaligned;  /* rank 0 said that a stopped run of it would start over */
  int keep_partial;     /* a failed or stopped run keeps the partial output */
  int published;        /* the output is under its name: nothing left to remove */
  int publish_failed;   /* the verified partial could not be renamed: it stays as it is */
  xpose_backend_kind backend;
  uint64_t budget, gpu_budget;
  int threads;           /* per rank: the chunk codec's and the host transposes' */
  char threads_why[512]; /* how many, and why (host_threads.h) */
} transpose_run;

/* The output dataset of the run's dataset k: OUT's where the command line
 * names one (a run of one dataset), else the input's path. */
static inline const char *output_name(const transpose_run *run, int k) {
  return run->out_path.dataset[0] ? run->out_path.dataset : run->rearranged.paths[k];
}

/* Whether HDF5 reads a view in place of the input (input_view.h). */
static inline int viewed(const transpose_run *run) {
  return run->reader != NULL;
}

/* Whether a dataset whose axes stay in place is rechunked: by --chunks,
 * or a join's records moved into the first input's chunks. */
static inline int rechunks_in_place(const transpose_run *run) {
  return run->opt->chunks || run->join_only;
}

/* The file HDF5 reads as the input: the input, or its view. */
static inline const char *hdf5_input(const transpose_run *run) {
  return viewed(run) ? run->output.view_path : run->in_path.file;
}

static inline uint64_t matrix_bytes(const xio_matrix *m) {
  return (uint64_t)m->rows * (uint64_t)m->cols * m->elem_size;
}

/* Bytes per rank for one piece of what is copied outside the passes (the
 * rest of the input): the budget, up to 64 MiB; larger pieces are no
 * faster, and overlap nothing.  Before the budget is set (an input's view
 * is filled first), --memory, or 64 MiB: never a piece of 0, which the
 * copies took as a row at a time (a 300000-value coordinate inflated
 * 300000 times).  (The read-back takes the budget: it reads pieces as
 * large, or a column of chunks where one needs more.) */
static inline uint64_t piece_budget(const transpose_run *run) {
  const uint64_t most = (uint64_t)64 << 20;
  const uint64_t budget = run->budget ? run->budget : run->opt->memory_bytes;
  return budget && budget < most ? budget : most;
}

/* The run's datasets, as h5_copy.h lists them. */
static inline xio_path_list rearranged_list(const transpose_run *run) {
  return (xio_path_list){(const char(*)[512])run->rearranged.paths, run->rearranged.count};
}

/* The scratch file move j writes (of an order of several moves). */
static inline const char *scratch_path(const transpose_run *run, int j) {
  return run->output.scratch_paths[j];
}

/* Collective.  The start of either run: nothing open yet, the paths
 * split, the MPI-IO hints set, the chunk codec's threads started.  An
 * exit status: a malformed path or hint is a usage error. */
int tool_run_begin(transpose_run *run, const tool_options *opt, MPI_Comm comm, xio_error *err);

#endif
