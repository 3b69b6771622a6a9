/* xpose-gen: write a deterministic test matrix of any shape and type.
 * Element (i, j) depends only on (seed, i, j, type), so any run, with any
 * number of ranks, writes the same file contents. */
#include <getopt.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_matrix.h"
#include "h5_types.h"
#include "node_memory.h"
#include "options.h"
#include "output_file.h"
#include "report.h"
#include "session.h"
#include "size.h"
#include "slab_walk.h"
#include "xpose.h"

static const char usage[] =
    "Usage: xpose-gen [options] ROWS COLS OUT.h5[:/dataset]\n"
    "Write a deterministic ROWS x COLS test matrix (dataset /matrix by default).\n"
    "Run it under MPI (mpirun -n P xpose-gen ...) or on its own.\n"
    "\n"
    "Options:\n"
    "  -t, --type TYPE    element type (default f64): i8 u8 i16 u16 i32 u32 i64 u64\n"
    "                     f32 f64, c64 c128 (complex as compound {r, i}), sN (fixed\n"
    "                     string of N bytes), oN (opaque, N bytes)\n"
    "      --big-endian   store numbers big-endian (default little-endian)\n"
    "      --layout L     contiguous (default), chunked or chunked=RxC\n"
    "      --filter F     none (default), gzip[=1-9] or shuffle+gzip[=1-9]\n"
    "  -s, --seed N       seed of the values (default 1)\n"
    "  -m, --memory SIZE  memory per rank for the write buffer (default: as xpose)\n"
    "  -f, --force        replace OUT.h5 if it exists\n"
    "  -q, --quiet        print errors only\n"
    "  -h, --help         print this help and exit\n"
    "  -V, --version      print the version and exit\n";

typedef enum { KIND_INTEGER, KIND_FLOAT, KIND_COMPLEX, KIND_STRING, KIND_OPAQUE } value_kind;

typedef struct {
  const char *type_name;
  int big_endian, force, quiet, help, version;
  int64_t rows, cols, seed;
  uint64_t memory;
  xio_storage storage;
  const char *output;
} gen_options;

static uint64_t mix(uint64_t x) { /* splitmix64 finalizer */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static value_kind kind_of(const char *name) {
  switch (name[0]) {
    case 'f': return KIND_FLOAT;
    case 'c': return KIND_COMPLEX;
    case 's': return KIND_STRING;
    case 'o': return KIND_OPAQUE;
    default: return KIND_INTEGER;
  }
}

/* One element in host byte order.  Floats lie in (-1, 1); integers and
 * opaque bytes are pseudo-random; strings name their position. */
static void make_element(value_kind kind, size_t es, uint64_t seed, int64_t i, int64_t j,
                         int64_t cols, unsigned char *out) {
  const uint64_t key = mix(seed ^ mix((uint64_t)i * (uint64_t)cols + (uint64_t)j));
  switch (kind) {
    case KIND_INTEGER: {
      const uint64_t v = key;
      const uint8_t v8 = (uint8_t)v;
      const uint16_t v16 = (uint16_t)v;
      const uint32_t v32 = (uint32_t)v;
      memcpy(out,
             es == 1   ? (const void *)&v8
             : es == 2 ? (const void *)&v16
             : es == 4 ? (const void *)&v32
                       : (const void *)&v,
             es);
      return;
    }
    case KIND_FLOAT:
    case KIND_COMPLEX: {
      const size_t part = kind == KIND_COMPLEX ? es / 2 : es;
      for (size_t k = 0; k * part < es; k++) {
        const uint64_t bits = k ? mix(key) : key;
        if (part == 4) {
          const float f = (float)((double)(bits >> 40) / 8388608.0 - 1.0);
          memcpy(out + k * part, &f, 4);
        } else {
          const double d = (double)(bits >> 11) / 4503599627370496.0 - 1.0;
          memcpy(out + k * part, &d, 8);
        }
      }
      return;
    }
    case KIND_STRING: {
      char text[64];
      const int n = snprintf(text, sizeof text, "r%lldc%lld", (long long)i, (long long)j);
      memset(out, 0, es);
      memcpy(out, text, (size_t)n < es ? (size_t)n : es);
      return;
    }
    case KIND_OPAQUE:
      for (size_t k = 0; k < es; k++) out[k] = (unsigned char)(mix(key + k / 8) >> (8 * (k % 8)));
      return;
  }
}

static int host_is_big_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 0;
}

/* Reverses each `unit`-byte number in buf, to store the other byte order. */
static void swap_bytes(unsigned char *buf, size_t bytes, size_t unit) {
  for (size_t at = 0; at + unit <= bytes; at += unit)
    for (size_t a = at, b = at + unit - 1; a < b; a++, b--) {
      const unsigned char t = buf[a];
      buf[a] = buf[b];
      buf[b] = t;
    }
}

static int parse(int argc, char **argv, gen_options *o, char *error, size_t size) {
  static const struct option long_options[] = {{"type", required_argument, NULL, 't'},
                                               {"big-endian", no_argument, NULL, 'B'},
                                               {"seed", required_argument, NULL, 's'},
                                               {"memory", required_argument, NULL, 'm'},
                                               {"layout", required_argument, NULL, 'L'},
                                               {"filter", required_argument, NULL, 'F'},
                                               {"force", no_argument, NULL, 'f'},
                                               {"quiet", no_argument, NULL, 'q'},
                                               {"help", no_argument, NULL, 'h'},
                                               {"version", no_argument, NULL, 'V'},
                                               {NULL, 0, NULL, 0}};
  *o = (gen_options){.type_name = "f64", .seed = 1};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":t:s:m:fqhV", long_options, NULL)) != -1) {
    switch (c) {
      case 't': o->type_name = optarg; break;
      case 'B': o->big_endian = 1; break;
      case 's':
        if (tool_parse_count(optarg, &o->seed))
          return snprintf(error, size, "invalid --seed '%s': expected a positive integer", optarg),
                 -1;
        break;
      case 'L':
        if (xio_storage_parse_layout(optarg, &o->storage))
          return snprintf(error, size, "invalid --layout '%s'", optarg), -1;
        break;
      case 'F':
        if (xio_storage_parse_filter(optarg, &o->storage))
          return snprintf(error, size, "invalid --filter '%s'", optarg), -1;
        break;
      case 'm':
        if (tool_parse_size(optarg, &o->memory))
          return snprintf(error, size, "invalid --memory '%s': expected a size such as 512M",
                          optarg),
                 -1;
        break;
      case 'f': o->force = 1; break;
      case 'q': o->quiet = 1; break;
      case 'h': o->help = 1; return 0;
      case 'V': o->version = 1; return 0;
      case ':': return snprintf(error, size, "option '%s' needs a value", argv[optind - 1]), -1;
      default: return snprintf(error, size, "unknown option '%s'", argv[optind - 1]), -1;
    }
  }
  if (argc - optind != 3)
    return snprintf(error, size, "expected ROWS COLS OUT.h5[:/dataset], got %d argument(s)",
                    argc - optind),
           -1;
  if (tool_parse_count(argv[optind], &o->rows) || tool_parse_count(argv[optind + 1], &o->cols))
    return snprintf(error, size, "ROWS and COLS must be positive integers, got '%s' and '%s'",
                    argv[optind], argv[optind + 1]),
           -1;
  o->output = argv[optind + 2];
  return 0;
}

static int generate(const gen_options *o, MPI_Comm comm) {
  xio_error err = {""};
  xio_matrix m;
  xio_matrix_reset(&m);
  char file[4096], dataset[512], type_text[256], name[sizeof m.dataset];
  tool_output_file output;
  memset(&output, 0, sizeof output);
  hid_t type = xio_type_from_name(o->type_name, o->big_endian);
  if (type < 0) {
    tool_report_error("unknown --type '%s' (see xpose-gen --help)", o->type_name);
    return TOOL_EXIT_USAGE;
  }
  if (xio_split_path(o->output, file, sizeof file, dataset, sizeof dataset)) {
    tool_report_error("invalid output '%s': expected FILE.h5 or FILE.h5:/dataset", o->output);
    (void)H5Tclose(type); /* failing already */
    return TOOL_EXIT_USAGE;
  }
  const value_kind kind = kind_of(o->type_name);
  const size_t es = H5Tget_size(type);
  const size_t swap_unit = (kind == KIND_INTEGER || kind == KIND_FLOAT) ? es
                           : kind == KIND_COMPLEX                       ? es / 2
                                                                        : 1;
  const int swap = o->big_endian != host_is_big_endian();
  xio_type_describe(type, type_text, sizeof type_text);
  uint64_t budget = o->memory;
  int rc = budget ? 0 : tool_default_memory_budget(comm, &budget, NULL, 0, &err);
  const double start = MPI_Wtime();
  unsigned char *buf = NULL;
  if (rc == 0)
    rc = tool_output_prepare(comm, file, NULL, 0, o->force, TOOL_PARTIAL_REPLACE, 0, &output, &err);
  const xio_shape shape = {
      .ndims = 2, .lead = 0, .split = 1, .trail = 2, .dims = {o->rows, o->cols}};
  if (rc == 0)
    rc = xio_create_output(comm, output.partial_path, file, dataset[0] ? dataset : "/matrix", type,
                           NULL, &o->storage, &shape, &m, &err);
  snprintf(name, sizeof name, "%s", m.dataset);
  xio_release(H5Tclose, &type, &rc, &err); /* the matrix holds its own copy */
  rc = xio_agree(comm, rc, &err);          /* a local failure, before collective calls */
  xio_slab_walk walk;
  if (rc == 0) rc = xio_slab_walk_init(comm, o->rows, o->cols, es, budget, &walk, &err);
  if (rc == 0) {
    buf = malloc((size_t)(walk.piece_rows * walk.piece_cols) * es + 1);
    rc = xio_agree(comm, buf ? 0 : xio_fail(&err, "cannot allocate the write buffer"), &err);
  }
  for (int64_t p = 0; rc == 0 && p < walk.total; p++) {
    int64_t r0, nr, c0, nc;
    xio_slab_walk_piece(&walk, p, &r0, &nr, &c0, &nc);
    for (int64_t i = 0; i < nr; i++)
      for (int64_t j = 0; j < nc; j++)
        make_element(kind, es, (uint64_t)o->seed, r0 + i, c0 + j, o->cols,
                     buf + (size_t)(i * nc + j) * es);
    if (swap && swap_unit > 1) swap_bytes(buf, (size_t)(nr * nc) * es, swap_unit);
    rc = xio_write_block(&m, r0, nr, c0, nc, buf, &err);
  }
  free(buf);
  int nranks = 0;
  if (rc == 0) rc = xio_close(&m, &err);
  if (rc == 0) rc = tool_output_publish(comm, &output, &err);
  if (rc == 0) rc = XIO_MPICHECK(MPI_Comm_size(comm, &nranks), &err);
  if (rc != 0) {
    tool_report_error("%s", err.message);
    xio_error ignored;
    xio_close(&m, &ignored);
    tool_output_release(comm, &output, 0);
    return TOOL_EXIT_ERROR;
  }
  char size_text[32];
  tool_format_bytes((uint64_t)o->rows * (uint64_t)o->cols * es, size_text, sizeof size_text);
  tool_report_result("wrote %s:%s (%lld x %lld, %s): %s, %d rank(s), %.3f s", file, name,
                     (long long)o->rows, (long long)o->cols, type_text, size_text, nranks,
                     MPI_Wtime() - start);
  return TOOL_EXIT_OK;
}

int main(int argc, char **argv) {
  int rank;
  int exit_code = tool_session_start("xpose-gen", &argc, &argv, &rank);
  if (exit_code != TOOL_EXIT_OK) return exit_code;
  gen_options o;
  char error[256];
  if (parse(argc, argv, &o, error, sizeof error) != 0) {
    if (rank == 0)
      fprintf(stderr, "xpose-gen: %s\nTry 'xpose-gen --help' for more information.\n", error);
    exit_code = TOOL_EXIT_USAGE;
  } else if (o.help || o.version) {
    if (rank == 0) fputs(o.help ? usage : "xpose-gen " XPOSE_VERSION_STRING "\n", stdout);
  } else {
    tool_report_setup("xpose-gen", rank, o.quiet, 0);
    exit_code = generate(&o, MPI_COMM_WORLD);
  }
  return tool_session_end("xpose-gen", rank, exit_code);
}
