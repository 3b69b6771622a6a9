#define _POSIX_C_SOURCE 200809L /* strdup */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_spec.h"
#include "size.h"
#include "xpose.h"

static const char usage[] =
    "Usage: xpose [options] IN.h5[:/dataset] OUT.h5[:/dataset]\n"
    "       xpose [options] IN1.nc IN2.nc ... OUT.nc\n"
    "       xpose verify [options] IN.h5[:/dataset] [IN2.nc ...] OUT.h5[:/dataset]\n"
    "Transpose a 2-D HDF5 dataset of any size and fixed-size type, or permute the\n"
    "axes of an N-D one, or rechunk it (--chunks); or (verify, or --check) prove\n"
    "that an existing OUT is that of IN, writing nothing.\n"
    "Run it under MPI (mpirun -n P xpose ...) or on its own as one rank.\n"
    "\n"
    "IN's dataset defaults to every one that --dims reorders, as ncpdq does, else to\n"
    "the file's one dataset of 2 or more axes that is not a coordinate, bounds or\n"
    "dimension scale (several: listed, to choose from); OUT's to IN's dataset path.\n"
    "OUT.h5 is a new file:\n"
    "IN.h5 with those datasets moved (same datatype, same attributes) and the rest copied\n"
    "as it is (groups, datasets, attributes, dimension scales, links), as NCO's ncpdq\n"
    "writes whole files; --only writes the transposed dataset alone.  A netCDF-3 IN\n"
    "(classic, 64-bit offset, CDF-5) gives a netCDF-4 OUT.  OUT.zarr (or --zarr-format)\n"
    "is a Zarr store, every rank writing its own chunks: the same content as a group,\n"
    "which xarray's open_zarr reads as it reads the netCDF-4 OUT; an IN.zarr store\n"
    "(v2 or v3) is read as a file is, its arrays the variables; stores are joined\n"
    "with stores, along the dimension --concat names.\n"
    "It is written as OUT.h5.xpose-partial and appears under its own name only once\n"
    "complete and read back from storage against checksums of what was written.\n"
    "TERM, INT, HUP, USR1 or USR2 stop a run after the pass in progress, keeping the\n"
    "partial output; the same command with --resume continues it (mpirun itself\n"
    "exits 1 when signalled, whatever its ranks did: read the outcome from --json or\n"
    "from the files).\n"
    "\n"
    "Options:\n"
    "      --dims A,B,...     the output's axes in order, by the input's dimension names\n"
    "                         (netCDF dimensions, dimension scales or labels), with\n"
    "                         ncpdq's rule: the named axes take the places they held,\n"
    "                         in this order, the others staying; e.g. --dims lat,lon,time\n"
    "                         turns time slices (time,lat,lon) into time series\n"
    "      --axes I,J,...     the same by the input's axis numbers, from 0: --axes 1,2,0\n"
    "                         (default: all reversed, numpy's .T; for 2-D, 1,0).  Orders\n"
    "                         other than one run of adjacent axes moved past the run\n"
    "                         before it take two or three such moves, through scratch\n"
    "                         files beside OUT as large as the dataset\n"
    "      --only             write the transposed dataset (and its dimension scales)\n"
    "                         alone, not the rest of IN.h5 (verify: check it alone)\n"
    "  -m, --memory SIZE      memory per rank for xpose's buffers (default: half of the\n"
    "                         node's memory, shared among the node's ranks); larger\n"
    "                         datasets are transposed in passes.  SIZE is bytes with an\n"
    "                         optional K, M, G or T (powers of 1024), e.g. 512M, 1.5G\n"
    "      --gpu-memory SIZE  device memory per GPU for xpose's buffers (default: half\n"
    "                         of the GPU's free memory)\n"
    "      --threads N        threads per rank that inflate and deflate chunks and\n"
    "                         transpose on the host (default: the CPUs the rank may\n"
    "                         run on, its node's shared among its ranks; mpirun binds\n"
    "                         a rank to one core unless given --bind-to none)\n"
    "      --backend B        auto (a GPU per rank when GPUs are present), cuda or host\n"
    "      --exchange E       how GPUs exchange blocks: auto (the best available, named\n"
    "                         with --verbose), p2p (within a node, straight into the\n"
    "                         other GPUs' memory; to other nodes, the best of the\n"
    "                         rest), nccl, mpi (CUDA-aware MPI) or staged (through\n"
    "                         host memory, any MPI)\n"
    "      --verify           also re-read the input, and check the output against it\n"
    "      --no-verify        publish without reading the output back (faster, and\n"
    "                         trusts the file system with every write)\n"
    "  -r, --resume           continue the partial output of an interrupted run of the\n"
    "                         same transpose; without one, start afresh; where OUT\n"
    "                         exists and is the transpose already, say so and exit 0;\n"
    "                         with --force, start over when it cannot be resumed\n"
    "      --checkpoint SECS  record the progress in the partial output at most every\n"
    "                         SECS seconds (default 10; 0: after every pass)\n"
    "  -f, --force            replace OUT.h5 if it exists, and start over rather than\n"
    "                         resume a partial output\n"
    "      --plan, --dry-run  say what the run would do and exit, writing nothing: each\n"
    "                         dataset moved or copied, its moves, passes and storage, the\n"
    "                         space needed against the space free, and a time estimate\n"
    "                         from the input's read rate, measured on a sample\n"
    "      --json             print the summary (or the error, or the plan) as one JSON\n"
    "                         object on stdout\n"
    "  -q, --quiet            print errors only\n"
    "  -v, --verbose          print the pass plan, timings and library messages\n"
    "      --io I             how the data moves: auto (contiguous datasets with every\n"
    "                         rank on one node: straight to and from their file\n"
    "                         offsets, reads and writes at once; the rest through\n"
    "                         HDF5's collective MPI-IO) or mpi-io (always the latter)\n"
    "      --mpi-hint KEY=VALUE  an MPI-IO hint for the input and output files, e.g.\n"
    "                         cb_buffer_size=16777216 or striping_factor=8 (repeatable;\n"
    "                         ROMIO also reads hints from the file named by ROMIO_HINTS)\n"
    "      --chunks SPEC      the output's chunks by dimension name, as nccopy -c takes\n"
    "                         them: time/1461,lat/16,lon/16 (NAME/ alone, or a name\n"
    "                         left out: the whole dimension).  With neither --dims\n"
    "                         nor --axes, the datasets of 2 or more axes that have a\n"
    "                         dimension it names are rechunked in their own order\n"
    "      --layout L         the output's storage: contiguous, chunked (1 MiB chunks)\n"
    "                         or chunked=AxBx... (a length for each axis; with the\n"
    "                         input's order, --axes 0,1,..., it rechunks).  Default:\n"
    "                         as the input's; a chunked input's chunks of its chunks'\n"
    "                         size, at least 1 MiB, shaped for the output's order: a\n"
    "                         time series' chunks reach along time as far as a pass\n"
    "                         does\n"
    "      --filter F         the output's compression: none, gzip[=1-9] (default 4)\n"
    "                         or shuffle+gzip[=1-9] (default: as the input's; szip is\n"
    "                         refused: parallel HDF5 1.10's szip chunks do not read back)\n"
    "      --zarr-format N    OUT is a Zarr store of format 2 or 3 (default 3; a store\n"
    "                         whatever OUT's name)\n"
    "      --shards SPEC      Zarr v3: chunks grouped in shards, each one file written\n"
    "                         whole by one rank, named as --chunks names a chunk:\n"
    "                         time/8760,lat/64,lon/64 (rounded up to whole chunks), or\n"
    "                         none.  Default: an array of over 1000 chunks in shards\n"
    "                         of up to a sixteenth of --memory (256 MiB at most), a\n"
    "                         thousand files or so\n"
    "      --compressor C     a Zarr store's chunk compressor: blosc-zstd (default),\n"
    "                         blosc-lz4, gzip, zstd, each with :LEVEL as numcodecs\n"
    "                         takes it (blosc-zstd:3, gzip:1, zstd:1, blosc-lz4:5 by\n"
    "                         default), or none\n"
    "      --max-message SIZE split messages between ranks above SIZE (default 1G;\n"
    "                         at most 2G - 1)\n"
    "      --concat NAME      join the inputs along dimension NAME, the first of every\n"
    "                         variable that has it, where they have no record\n"
    "                         dimension (it becomes the output's); NAME /A,/B,...:\n"
    "                         along the first axis of those datasets (HDF5 files;\n"
    "                         by default, those whose first axis is unlimited)\n"
    "      --inputs LIST      the inputs, one path a line, joined along their record\n"
    "                         dimension in that order (after any given before OUT),\n"
    "                         as ncrcat joins them, then rearranged (with none of\n"
    "                         --dims, --axes, --chunks: joined alone)\n"
    "  -h, --help             print this help and exit\n"
    "  -V, --version          print the version and exit\n"
    "\n"
    "Examples:\n"
    "  mpirun -q -n 8 xpose --dims lat,lon,time slices.nc series.nc\n"
    "      every variable of slices.nc with those dimensions made a time series, the\n"
    "      rest copied (as ncpdq -a lat,lon,time)\n"
    "  mpirun -q -n 8 xpose --chunks time/1461,lat/16,lon/16 slices.nc rechunked.nc\n"
    "      the same file, its axes in place, chunked for time series (as nccopy -c)\n"
    "  mpirun -q -n 4 xpose data.h5:/matrix out.h5\n"
    "      a matrix transposed, the rest of data.h5 copied; then `xpose verify\n"
    "      data.h5:/matrix out.h5` checks it again\n"
    "\n"
    "Exit status: 0 success, 1 error, 2 usage error, 3 verification failed (verify: not\n"
    "the transpose), 4 stopped by a signal (the partial output is kept for --resume).\n";

const char *tool_usage(void) { return usage; }

/* An option, as a row of the table below: what it sets, and how its
 * value is read. */
typedef enum {
  SETS_FLAG,     /* 1; no value */
  SETS_CONSTANT, /* the row's `most`; no value */
  SETS_SIZE,
  SETS_CHOICE,
  SETS_TEXT,
  SETS_OWN /* read by the row's `own` */
} option_kind;

typedef struct {
  const char *name;
  int letter; /* the short option, or 0 */
  option_kind kind;
  size_t field;               /* offsetof(tool_options, ...) of what it sets */
  const char *const *choices; /* SETS_CHOICE: names in enum order, NULL-terminated */
  uint64_t most;              /* SETS_SIZE: the largest allowed (0: any); SETS_CONSTANT: it */
  const char *expected;       /* "invalid --NAME 'VALUE': expected ..." */
  int (*own)(const char *value, tool_options *o, char *error, size_t error_size);
} option_row;

static int usage_error(char *error, size_t size, const char *format, const char *what) {
  snprintf(error, size, format, what);
  return -1;
}

/* Index of `value` in `names` (NULL-terminated, in enum order), or -1. */
static int choice(const char *value, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (strcmp(value, names[i]) == 0) return i;
  return -1;
}

/* SETS_OWN readers: 0; -1 for the row's "expected" message; -2 with their
 * own in error. */
static int read_checkpoint(const char *value, tool_options *o, char *error, size_t error_size) {
  (void)error, (void)error_size;
  char *end = NULL;
  const double seconds = strtod(value, &end);
  if (end == value || *end || !(seconds >= 0) || seconds > 1e9) return -1;
  o->checkpoint_seconds = seconds;
  return 0;
}

/* One more input listed (copied); 0, or -1 when out of memory. */
static int list_input(tool_options *o, const char *path, int *capacity) {
  if (o->listed_count == *capacity) {
    const int larger = *capacity ? 2 * *capacity : 64;
    const char **grown = realloc(o->listed, (size_t)larger * sizeof *grown);
    if (!grown) return -1;
    o->listed = grown;
    *capacity = larger;
  }
  return (o->listed[o->listed_count] = strdup(path)) ? (o->listed_count++, 0) : -1;
}

/* --inputs LIST: its lines, each an input (empty lines skipped). */
static int read_inputs(const char *value, tool_options *o, char *error, size_t error_size) {
  FILE *f = fopen(value, "r");
  const char *wrong = f ? NULL : strerror(errno);
  char line[4096];
  int capacity = o->listed_count;
  while (!wrong && fgets(line, sizeof line, f)) {
    const size_t length = strcspn(line, "\r\n");
    if (length == sizeof line - 1) wrong = "a line of 4095 bytes or more: not a path";
    line[length] = '\0';
    if (!wrong && line[0] && list_input(o, line, &capacity)) wrong = "out of memory";
  }
  if (f && !wrong && ferror(f)) wrong = "cannot read it";
  if (f) fclose(f);
  if (wrong) snprintf(error, error_size, "--inputs %s: %s", value, wrong);
  return wrong ? -2 : 0;
}

static int read_mpi_hint(const char *value, tool_options *o, char *error, size_t error_size) {
  if (!strchr(value, '=') || value[0] == '=') return -1;
  if (o->mpi_hint_count == (int)(sizeof o->mpi_hints / sizeof *o->mpi_hints))
    return usage_error(error, error_size, "%s", "at most 32 --mpi-hint options") - 1;
  o->mpi_hints[o->mpi_hint_count++] = value;
  return 0;
}

static int read_threads(const char *value, tool_options *o, char *error, size_t error_size) {
  (void)error, (void)error_size;
  char *end = NULL;
  const long threads = strtol(value, &end, 10);
  if (end == value || *end || threads < 1 || threads > 256) return -1;
  o->threads = (int)threads;
  return 0;
}

static int read_layout(const char *value, tool_options *o, char *error, size_t error_size) {
  (void)error, (void)error_size;
  return xio_storage_parse_layout(value, &o->storage) ? -1 : 0;
}

static int read_chunks(const char *value, tool_options *o, char *error, size_t error_size) {
  if (tool_chunk_spec_check(value, error, error_size)) return -2;
  o->chunks = value;
  o->storage.layout = XIO_LAYOUT_CHUNKED;
  return 0;
}

static int read_shards(const char *value, tool_options *o, char *error, size_t error_size) {
  o->unsharded = strcmp(value, "none") == 0;
  if (!o->unsharded && tool_chunk_spec_check(value, error, error_size)) return -2;
  o->shards = value;
  return 0;
}

static int read_filter(const char *value, tool_options *o, char *error, size_t error_size) {
  (void)error, (void)error_size;
  return xio_storage_parse_filter(value, &o->storage) ? -1 : 0;
}

static int read_zarr_format(const char *value, tool_options *o, char *error, size_t error_size) {
  (void)error, (void)error_size;
  if (strcmp(value, "2") != 0 && strcmp(value, "3") != 0) return -1;
  o->zarr = 1;
  o->zarr_codec.format = value[0] - '0';
  return 0;
}

/* --compressor NAME[:LEVEL] */
static int read_compressor(const char *value, tool_options *o, char *error, size_t error_size) {
  (void)error, (void)error_size;
  char name[32];
  const size_t length = strcspn(value, ":");
  if (length >= sizeof name) return -1;
  memcpy(name, value, length), name[length] = '\0';
  if (xio_zarr_compressor_of(name, &o->zarr_codec.compressor)) return -1;
  if (!value[length]) return 0;
  char *end = NULL;
  const long level = strtol(value + length + 1, &end, 10);
  const long most = o->zarr_codec.compressor == XIO_ZARR_ZSTD ? 22 : 9;
  if (end == value + length + 1 || *end || level < 0 || level > most ||
      o->zarr_codec.compressor == XIO_ZARR_UNCOMPRESSED)
    return -1;
  o->zarr_codec.level = (int)level;
  return 0;
}

static const char *const backends[] = {"auto", "host", "cuda", NULL},
                         *const exchanges[] = {"auto", "mpi", "nccl", "staged", "p2p", NULL},
                         *const io_paths[] = {"auto", "mpi-io", NULL};

#define FIELD(f) offsetof(tool_options, f)
static const option_row option_table[] = {
    {"memory", 'm', SETS_SIZE, FIELD(memory_bytes), NULL, 0, "a size such as 512M or 4G", NULL},
    {"max-message", 0, SETS_SIZE, FIELD(max_message_bytes), NULL, INT_MAX,
     "a size from 1 to 2G - 1", NULL},
    {"gpu-memory", 0, SETS_SIZE, FIELD(gpu_memory_bytes), NULL, 0, "a size such as 8G", NULL},
    {"backend", 0, SETS_CHOICE, FIELD(backend), backends, 0, "auto, cuda or host", NULL},
    {"exchange", 0, SETS_CHOICE, FIELD(exchange), exchanges, 0, "auto, p2p, nccl, mpi or staged",
     NULL},
    {"io", 0, SETS_CHOICE, FIELD(io_mpi_only), io_paths, 0, "auto or mpi-io", NULL},
    {"verify", 0, SETS_CONSTANT, FIELD(verify), NULL, TOOL_VERIFY_INPUT, NULL, NULL},
    {"no-verify", 0, SETS_CONSTANT, FIELD(verify), NULL, TOOL_VERIFY_NONE, NULL, NULL},
    {"checkpoint", 0, SETS_OWN, 0, NULL, 0, "seconds, 0 or more", read_checkpoint},
    {"threads", 0, SETS_OWN, 0, NULL, 0, "a count from 1 to 256", read_threads},
    {"mpi-hint", 0, SETS_OWN, 0, NULL, 0, "KEY=VALUE", read_mpi_hint},
    {"inputs", 0, SETS_OWN, 0, NULL, 0, NULL, read_inputs},
    {"layout", 0, SETS_OWN, 0, NULL, 0, "contiguous, chunked or chunked=AxBx...", read_layout},
    {"chunks", 0, SETS_OWN, 0, NULL, 0, NULL, read_chunks},
    {"filter", 0, SETS_OWN, 0, NULL, 0, "none, gzip[=1-9], shuffle+gzip[=1-9] or szip",
     read_filter},
    {"zarr-format", 0, SETS_OWN, 0, NULL, 0, "2 or 3", read_zarr_format},
    {"shards", 0, SETS_OWN, 0, NULL, 0, NULL, read_shards},
    {"compressor", 0, SETS_OWN, 0, NULL, 0,
     "blosc-zstd, blosc-lz4, gzip or zstd, each with an optional :LEVEL, or none", read_compressor},
    {"axes", 0, SETS_TEXT, FIELD(axes), NULL, 0, NULL, NULL},
    {"dims", 0, SETS_TEXT, FIELD(dims), NULL, 0, NULL, NULL},
    {"concat", 0, SETS_TEXT, FIELD(concat), NULL, 0, NULL, NULL},
    {"resume", 'r', SETS_FLAG, FIELD(resume), NULL, 0, NULL, NULL},
    {"json", 0, SETS_FLAG, FIELD(json), NULL, 0, NULL, NULL},
    {"check", 0, SETS_FLAG, FIELD(check), NULL, 0, NULL, NULL},
    {"only", 0, SETS_FLAG, FIELD(only), NULL, 0, NULL, NULL},
    {"plan", 0, SETS_FLAG, FIELD(plan), NULL, 0, NULL, NULL},
    {"dry-run", 0, SETS_FLAG, FIELD(plan), NULL, 0, NULL, NULL},
    {"force", 'f', SETS_FLAG, FIELD(force), NULL, 0, NULL, NULL},
    {"quiet", 'q', SETS_FLAG, FIELD(quiet), NULL, 0, NULL, NULL},
    {"verbose", 'v', SETS_FLAG, FIELD(verbose), NULL, 0, NULL, NULL},
    {"help", 'h', SETS_FLAG, FIELD(help), NULL, 0, NULL, NULL},
    {"version", 'V', SETS_FLAG, FIELD(version), NULL, 0, NULL, NULL},
};
#undef FIELD
enum { OPTION_ROWS = sizeof option_table / sizeof *option_table };
_Static_assert(OPTION_ROWS <= 64, "a bit for each option given");

/* Options that exclude each other, by name. */
static const char *const exclusive[][2] = {
    {"verify", "no-verify"}, {"axes", "dims"}, {"quiet", "verbose"}, {"chunks", "layout"}};

static int row_named(const char *name) {
  int r = 0;
  while (strcmp(option_table[r].name, name) != 0) r++;
  return r;
}

/* A row's value read into the options: 0, or -1 with the message. */
static int apply_row(const option_row *row, const char *value, tool_options *options, char *error,
                     size_t error_size) {
  char *field = (char *)options + row->field;
  int rc = 0;
  switch (row->kind) {
    case SETS_FLAG: *(int *)field = 1; break;
    case SETS_CONSTANT: *(int *)field = (int)row->most; break;
    case SETS_TEXT: *(const char **)field = value; break;
    case SETS_SIZE:
      rc = tool_parse_size(value, (uint64_t *)field) != 0 ||
                   (row->most && *(uint64_t *)field > row->most)
               ? -1
               : 0;
      break;
    case SETS_CHOICE: rc = (*(int *)field = choice(value, row->choices)) < 0 ? -1 : 0; break;
    case SETS_OWN: rc = row->own(value, options, error, error_size); break;
  }
  if (rc == -1)
    snprintf(error, error_size, "invalid --%s '%s': expected %s", row->name, value, row->expected);
  return rc ? -1 : 0;
}

/* The options that need or exclude each other, once all are read
 * (given: a bit for each row given). */
static int check_combinations(const tool_options *o, uint64_t given, char *error,
                              size_t error_size) {
  if (o->backend == XPOSE_BACKEND_HOST && o->exchange != XPOSE_EXCHANGE_AUTO &&
      o->exchange != XPOSE_EXCHANGE_MPI)
    return usage_error(
        error, error_size, "%s",
        "--exchange p2p, nccl and staged move GPU buffers: they need --backend cuda or auto");
  if (o->storage.layout == XIO_LAYOUT_CONTIGUOUS && o->storage.filter != XIO_FILTER_AS_INPUT &&
      o->storage.filter != XIO_FILTER_NONE)
    return usage_error(error, error_size, "%s",
                       "--filter compresses chunks: it needs --layout chunked (or the default)");
  if (o->check && o->plan)
    return usage_error(error, error_size, "%s",
                       "--plan says what a run would write: xpose verify writes nothing");
  for (size_t i = 0; i < sizeof exclusive / sizeof *exclusive; i++) {
    const uint64_t both = 1ull << row_named(exclusive[i][0]) | 1ull << row_named(exclusive[i][1]);
    if ((given & both) == both) {
      snprintf(error, error_size, "--%s and --%s exclude each other", exclusive[i][0],
               exclusive[i][1]);
      return -1;
    }
  }
  return 0;
}

/* The command line as the output's history records it. */
static void record_command_line(int argc, char **argv, tool_options *options) {
  size_t used = 0;
  for (int i = 0; i < argc && used < sizeof options->command_line; i++)
    used += (size_t)snprintf(options->command_line + used, sizeof options->command_line - used,
                             "%s%s", i ? " " : "", i ? argv[i] : "xpose");
}

/* The inputs (those before OUT, then --inputs') and the output. */
static int take_paths(int positional, char **paths, tool_options *o, char *error,
                      size_t error_size) {
  if (positional < 1 || positional + o->listed_count < 2)
    return usage_error(error, error_size, "%s",
                       "missing arguments: expected IN.h5[:/dataset] OUT.h5[:/dataset]");
  o->input_count = positional - 1 + o->listed_count;
  o->inputs = malloc((size_t)o->input_count * sizeof *o->inputs);
  if (!o->inputs) return usage_error(error, error_size, "%s", "out of memory");
  for (int i = 0; i < positional - 1; i++) o->inputs[i] = paths[i];
  for (int i = 0; i < o->listed_count; i++) o->inputs[positional - 1 + i] = o->listed[i];
  o->input = o->inputs[0];
  o->output = paths[positional - 1];
  const size_t length = strlen(o->output);
  const char *end = o->output + length - (length && o->output[length - 1] == '/');
  if (end - o->output >= 5 && strncmp(end - 5, ".zarr", 5) == 0) o->zarr = 1;
  if (o->zarr && (o->storage.layout == XIO_LAYOUT_CONTIGUOUS || o->storage.filter))
    return usage_error(error, error_size, "%s",
                       "a Zarr store is chunked, and compressed by --compressor: --layout "
                       "contiguous and --filter are for HDF5 outputs");
  if (o->shards && (!o->zarr || o->zarr_codec.format != 3))
    return usage_error(error, error_size, "%s",
                       "--shards makes Zarr v3's shards: the output must be a Zarr store of "
                       "format 3");
  if (o->concat && o->input_count < 2)
    return usage_error(error, error_size, "--concat %s joins several inputs: give two or more",
                       o->concat);
  return 0;
}

int tool_parse_options(int argc, char **argv, tool_options *options, char *error,
                       size_t error_size) {
  struct option longs[OPTION_ROWS + 1] = {{0}};
  char letters[2 * OPTION_ROWS + 2] = ":", *next = letters + 1; /* ':' first: values missing */
  for (int r = 0; r < OPTION_ROWS; r++) {
    const option_row *row = &option_table[r];
    const int takes_value = row->kind != SETS_FLAG && row->kind != SETS_CONSTANT;
    longs[r] =
        (struct option){row->name, takes_value ? required_argument : no_argument, NULL, 256 + r};
    if (row->letter) *next++ = (char)row->letter;
    if (row->letter && takes_value) *next++ = ':';
  }
  memset(options, 0, sizeof *options);
  record_command_line(argc, argv, options);
  if (argc > 1 && strcmp(argv[1], "verify") == 0) { /* the subcommand: "verify" is argv[0] */
    options->check = 1;
    argc--;
    argv++;
  }
  options->checkpoint_seconds = 10;
  options->zarr_codec =
      (xio_zarr_codec){.format = 3, .compressor = XIO_ZARR_BLOSC_ZSTD, .level = -1};
  uint64_t given = 0;
  optind = 0; /* GNU: restart scanning, so parsing can run more than once */
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, letters, longs, NULL)) != -1;) {
    if (c == ':')
      return usage_error(error, error_size, "option '%s' needs a value", argv[optind - 1]);
    int r = c >= 256 ? c - 256 : 0;
    while (c < 256 && r < OPTION_ROWS && option_table[r].letter != c) r++;
    if (r >= OPTION_ROWS) {                     /* '?' */
      char name[3] = {'-', (char)optopt, '\0'}; /* optopt is 0 for long options */
      return usage_error(error, error_size, "unknown option '%s'",
                         optopt ? name : argv[optind - 1]);
    }
    if (apply_row(&option_table[r], optarg, options, error, error_size)) return -1;
    given |= 1ull << r;
  }
  if (options->help || options->version) return 0;
  if (check_combinations(options, given, error, error_size)) return -1;
  return take_paths(argc - optind, argv + optind, options, error, error_size);
}
