#include "options.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "size.h"
#include "xpose.h"

enum {
  OPT_VERIFY = 256,
  OPT_NO_VERIFY,
  OPT_RESUME,
  OPT_CHECKPOINT,
  OPT_MAX_MESSAGE,
  OPT_BACKEND,
  OPT_EXCHANGE,
  OPT_IO,
  OPT_GPU_MEMORY,
  OPT_JSON,
  OPT_CHECK,
  OPT_MPI_HINT,
  OPT_LAYOUT,
  OPT_FILTER,
  OPT_AXES,
  OPT_DIMS,
  OPT_ONLY
};

/* Index of `value` in `names` (NULL-terminated, in enum order), or -1. */
static int choice(const char *value, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (strcmp(value, names[i]) == 0) return i;
  return -1;
}

const char *tool_usage(void) {
  return "Usage: xpose [options] IN.h5[:/dataset] OUT.h5[:/dataset]\n"
         "       xpose verify [options] IN.h5[:/dataset] OUT.h5[:/dataset]\n"
         "Transpose a 2-D HDF5 dataset of any size and fixed-size type, or permute the\n"
         "axes of an N-D one; or (verify, or --check) prove that an existing OUT is that\n"
         "of IN, writing nothing.\n"
         "Run it under MPI (mpirun -n P xpose ...) or on its own as one rank.\n"
         "\n"
         "IN's dataset defaults to every one that --dims reorders, as ncpdq does, else to\n"
         "the file's only 2-D dataset; OUT's to IN's dataset path.  OUT.h5 is a new file:\n"
         "IN.h5 with those datasets moved (same datatype, same attributes) and the rest copied\n"
         "as it is (groups, datasets, attributes, dimension scales, links), as NCO's ncpdq\n"
         "writes whole files; --only writes the transposed dataset alone.\n"
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
         "      --json             print the summary (or the error) as one JSON object on\n"
         "                         stdout\n"
         "  -q, --quiet            print errors only\n"
         "  -v, --verbose          print the pass plan, timings and library messages\n"
         "      --io I             how the data moves: auto (contiguous datasets with every\n"
         "                         rank on one node: straight to and from their file\n"
         "                         offsets, reads and writes at once; the rest through\n"
         "                         HDF5's collective MPI-IO) or mpi-io (always the latter)\n"
         "      --mpi-hint KEY=VALUE  an MPI-IO hint for the input and output files, e.g.\n"
         "                         cb_buffer_size=16777216 or striping_factor=8 (repeatable;\n"
         "                         ROMIO also reads hints from the file named by ROMIO_HINTS)\n"
         "      --layout L         the output's storage: contiguous, chunked (1 MiB chunks)\n"
         "                         or chunked=RxC (default: as the input's; a chunked\n"
         "                         input's chunks of its chunks' size, at least 1 MiB,\n"
         "                         shaped for the output's order: a time series' chunks\n"
         "                         reach along time as far as a pass does)\n"
         "      --filter F         the output's compression: none, gzip[=1-9] (default 4)\n"
         "                         or shuffle+gzip[=1-9] (default: as the input's; szip is\n"
         "                         refused: parallel HDF5 1.10's szip chunks do not read back)\n"
         "      --max-message SIZE split messages between ranks above SIZE (default 1G;\n"
         "                         at most 2G - 1)\n"
         "  -h, --help             print this help and exit\n"
         "  -V, --version          print the version and exit\n"
         "\n"
         "Exit status: 0 success, 1 error, 2 usage error, 3 verification failed (verify: not\n"
         "the transpose), 4 stopped by a signal (the partial output is kept for --resume).\n";
}

static int usage_error(char *error, size_t size, const char *format, const char *what) {
  snprintf(error, size, format, what);
  return -1;
}

int tool_parse_options(int argc, char **argv, tool_options *options, char *error,
                       size_t error_size) {
  static const struct option long_options[] = {
      {"memory", required_argument, NULL, 'm'},
      {"verify", no_argument, NULL, OPT_VERIFY},
      {"no-verify", no_argument, NULL, OPT_NO_VERIFY},
      {"resume", no_argument, NULL, 'r'},
      {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
      {"json", no_argument, NULL, OPT_JSON},
      {"check", no_argument, NULL, OPT_CHECK},
      {"mpi-hint", required_argument, NULL, OPT_MPI_HINT},
      {"io", required_argument, NULL, OPT_IO},
      {"layout", required_argument, NULL, OPT_LAYOUT},
      {"filter", required_argument, NULL, OPT_FILTER},
      {"axes", required_argument, NULL, OPT_AXES},
      {"dims", required_argument, NULL, OPT_DIMS},
      {"only", no_argument, NULL, OPT_ONLY},
      {"force", no_argument, NULL, 'f'},
      {"quiet", no_argument, NULL, 'q'},
      {"verbose", no_argument, NULL, 'v'},
      {"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
      {"gpu-memory", required_argument, NULL, OPT_GPU_MEMORY},
      {"backend", required_argument, NULL, OPT_BACKEND},
      {"exchange", required_argument, NULL, OPT_EXCHANGE},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  memset(options, 0, sizeof *options);
  size_t used = 0;
  for (int i = 0; i < argc && used < sizeof options->command_line; i++)
    used += (size_t)snprintf(options->command_line + used, sizeof options->command_line - used,
                             "%s%s", i ? " " : "", i ? argv[i] : "xpose");
  if (argc > 1 && strcmp(argv[1], "verify") == 0) { /* the subcommand: "verify" is argv[0] */
    options->check = 1;
    argc--;
    argv++;
  }
  options->checkpoint_seconds = 10;
  int verify_options = 0;
  optind = 0; /* GNU: restart scanning, so parsing can run more than once */
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":m:rfqvhV", long_options, NULL)) != -1) {
    switch (c) {
      case 'm':
        if (tool_parse_size(optarg, &options->memory_bytes) != 0)
          return usage_error(error, error_size,
                             "invalid --memory '%s': expected a size such as 512M or 4G", optarg);
        break;
      case OPT_MAX_MESSAGE:
        if (tool_parse_size(optarg, &options->max_message_bytes) != 0 ||
            options->max_message_bytes > INT_MAX)
          return usage_error(error, error_size,
                             "invalid --max-message '%s': expected a size from 1 to 2G - 1",
                             optarg);
        break;
      case OPT_GPU_MEMORY:
        if (tool_parse_size(optarg, &options->gpu_memory_bytes) != 0)
          return usage_error(error, error_size,
                             "invalid --gpu-memory '%s': expected a size such as 8G", optarg);
        break;
      case OPT_BACKEND: {
        static const char *const names[] = {"auto", "host", "cuda", NULL};
        if ((options->backend = choice(optarg, names)) < 0)
          return usage_error(error, error_size,
                             "invalid --backend '%s': expected auto, cuda or host", optarg);
        break;
      }
      case OPT_EXCHANGE: {
        static const char *const names[] = {"auto", "mpi", "nccl", "staged", "p2p", NULL};
        if ((options->exchange = choice(optarg, names)) < 0)
          return usage_error(error, error_size,
                             "invalid --exchange '%s': expected auto, p2p, nccl, mpi or staged",
                             optarg);
        break;
      }
      case OPT_VERIFY:
      case OPT_NO_VERIFY:
        options->verify = c == OPT_VERIFY ? TOOL_VERIFY_INPUT : TOOL_VERIFY_NONE;
        verify_options |= c == OPT_VERIFY ? 1 : 2;
        break;
      case OPT_CHECKPOINT: {
        char *end = NULL;
        options->checkpoint_seconds = strtod(optarg, &end);
        if (end == optarg || *end || !(options->checkpoint_seconds >= 0) ||
            options->checkpoint_seconds > 1e9)
          return usage_error(error, error_size,
                             "invalid --checkpoint '%s': expected seconds, 0 or more", optarg);
        break;
      }
      case 'r': options->resume = 1; break;
      case OPT_JSON: options->json = 1; break;
      case OPT_IO:
        if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "mpi-io") != 0)
          return usage_error(error, error_size, "invalid --io '%s': expected auto or mpi-io",
                             optarg);
        options->io_mpi_only = strcmp(optarg, "mpi-io") == 0;
        break;
      case OPT_CHECK: options->check = 1; break;
      case OPT_MPI_HINT: {
        const int max = (int)(sizeof options->mpi_hints / sizeof *options->mpi_hints);
        if (!strchr(optarg, '=') || optarg[0] == '=')
          return usage_error(error, error_size, "invalid --mpi-hint '%s': expected KEY=VALUE",
                             optarg);
        if (options->mpi_hint_count == max)
          return usage_error(error, error_size, "%s", "at most 32 --mpi-hint options");
        options->mpi_hints[options->mpi_hint_count++] = optarg;
        break;
      }
      case OPT_LAYOUT:
        if (xio_storage_parse_layout(optarg, &options->storage))
          return usage_error(error, error_size,
                             "invalid --layout '%s': expected contiguous, chunked or chunked=RxC",
                             optarg);
        break;
      case OPT_FILTER:
        if (xio_storage_parse_filter(optarg, &options->storage))
          return usage_error(error, error_size,
                             "invalid --filter '%s': expected none, gzip[=1-9], "
                             "shuffle+gzip[=1-9] or szip",
                             optarg);
        break;
      case OPT_AXES: options->axes = optarg; break;
      case OPT_DIMS: options->dims = optarg; break;
      case OPT_ONLY: options->only = 1; break;
      case 'f': options->force = 1; break;
      case 'q': options->quiet = 1; break;
      case 'v': options->verbose = 1; break;
      case 'h': options->help = 1; break;
      case 'V': options->version = 1; break;
      case ':':
        return usage_error(error, error_size, "option '%s' needs a value", argv[optind - 1]);
      default: {
        char name[3] = {'-', (char)optopt, '\0'}; /* optopt is 0 for long options */
        return usage_error(error, error_size, "unknown option '%s'",
                           optopt ? name : argv[optind - 1]);
      }
    }
  }
  if (options->help || options->version) return 0;
  if (options->backend == XPOSE_BACKEND_HOST && options->exchange != XPOSE_EXCHANGE_AUTO &&
      options->exchange != XPOSE_EXCHANGE_MPI)
    return usage_error(
        error, error_size, "%s",
        "--exchange p2p, nccl and staged move GPU buffers: they need --backend cuda or auto");
  if (options->storage.layout == XIO_LAYOUT_CONTIGUOUS &&
      options->storage.filter != XIO_FILTER_AS_INPUT && options->storage.filter != XIO_FILTER_NONE)
    return usage_error(error, error_size, "%s",
                       "--filter compresses chunks: it needs --layout chunked (or the default)");
  if (verify_options == 3)
    return usage_error(error, error_size, "%s", "--verify and --no-verify exclude each other");
  if (options->axes && options->dims)
    return usage_error(error, error_size, "%s", "--axes and --dims exclude each other");
  if (options->quiet && options->verbose)
    return usage_error(error, error_size, "%s", "--quiet and --verbose exclude each other");
  const int positional = argc - optind;
  if (positional < 2)
    return usage_error(error, error_size, "%s",
                       "missing arguments: expected IN.h5[:/dataset] OUT.h5[:/dataset]");
  if (positional > 2)
    return usage_error(error, error_size, "unexpected argument '%s'", argv[optind + 2]);
  options->input = argv[optind];
  options->output = argv[optind + 1];
  return 0;
}
