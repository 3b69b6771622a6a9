/* The command line of `xpose`. */
#ifndef TOOL_OPTIONS_H
#define TOOL_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "h5_storage.h"
#include "zarr_array.h"

typedef struct {
  const char *input, *output; /* "file.h5[:/dataset]"; input: the first of inputs */
  /* Several inputs are joined along their record dimension: those given
   * before OUT, then those of --inputs (`listed`, owned). */
  const char **inputs;
  int input_count;
  const char **listed;
  int listed_count;
  const char *axes, *dims;    /* --axes "2,0,1", --dims "lat,lon,time": the output's order */
  char command_line[2048];    /* for the output's history attribute */
  uint64_t memory_bytes;      /* per rank; 0: from the node's memory */
  uint64_t gpu_memory_bytes;  /* per GPU; 0: half of its free memory */
  int backend;                /* an xpose_backend_kind */
  int exchange;               /* an xpose_exchange_kind */
  uint64_t max_message_bytes; /* 0: the library's default */
  int verify;                 /* TOOL_VERIFY_* */
  int resume, force, quiet, verbose;
  int json;                  /* the summary as one JSON object */
  const char *mpi_hints[32]; /* "KEY=VALUE", for every file opened */
  int mpi_hint_count;
  int check;                 /* `xpose verify IN OUT`: check, do not write */
  double checkpoint_seconds; /* between checkpoints of the partial output */
  xio_storage storage;       /* --layout, --filter: as the input's by default */
  const char *chunks;        /* --chunks "time/1461,lat/16": the output's, by axis name */
  const char *concat;        /* --concat NAME: the inputs joined along that fixed dimension */
  int io_mpi_only;           /* --io mpi-io: every transfer through HDF5's MPI-IO */
  int only;                  /* --only: the transposed dataset alone, not the rest of IN */
  int plan;                  /* --plan (--dry-run): say what the run would do, write nothing */
  int threads;               /* --threads: per rank, for chunks and host transposes; 0: its CPUs */
  int help, version;
  /* OUT is a Zarr store (output_kind.h): named *.zarr, or --zarr-format
   * given; its format (default 3) and --compressor */
  int zarr;
  xio_zarr_codec zarr_codec;
  const char *shards; /* --shards "time/8760,lat/64,lon/64": v3's, by axis name */
  int unsharded;      /* --shards none: v3's chunks one file each, however many */
} tool_options;

/* How the output is checked before it is published: against the checksums
 * of what was written (default), not at all, or against the input re-read. */
enum { TOOL_VERIFY_WRITTEN = 0, TOOL_VERIFY_NONE, TOOL_VERIFY_INPUT };

/* Exit statuses of the tools. */
enum {
  TOOL_EXIT_OK = 0,
  TOOL_EXIT_ERROR = 1,
  TOOL_EXIT_USAGE = 2,
  TOOL_EXIT_VERIFY = 3,
  TOOL_EXIT_STOPPED = 4 /* by a signal; the partial output is kept for --resume */
};

/* Whether the output's chunks are given, so that an order that keeps every
 * axis in place rechunks (--chunks; --layout chunked=AxBx...). */
static inline int tool_rechunks(const tool_options *o) {
  return o->chunks || o->storage.chunk_ndims > 0;
}

/* Returns 0, or -1 with one line in error (a usage error: exit 2).  With
 * --help or --version set, positional arguments are not required. */
int tool_parse_options(int argc, char **argv, tool_options *options, char *error,
                       size_t error_size);

/* The --help text. */
const char *tool_usage(void);

#endif
