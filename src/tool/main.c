/* xpose: transpose a 2-D HDF5 dataset with MPI ranks, out of core. */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "file_safety.h"
#ifdef XPOSE_HAVE_CUDA
#include "gpus.h"
#endif
#include "h5_matrix.h"
#include "h5_transpose.h"
#include "h5_types.h"
#include "h5_verify.h"
#include "node_memory.h"
#include "options.h"
#include "report.h"
#include "size.h"
#include "xpose.h"

typedef struct {
  char file[4096], dataset[512];
} dataset_path;

static int parse_paths(const xpose_cli_options *opt, dataset_path *in, dataset_path *out,
                       xio_error *err) {
  if (xio_split_path(opt->input, in->file, sizeof in->file, in->dataset, sizeof in->dataset))
    return xio_fail(err, "invalid input '%s': expected FILE.h5 or FILE.h5:/dataset", opt->input);
  if (xio_split_path(opt->output, out->file, sizeof out->file, out->dataset, sizeof out->dataset))
    return xio_fail(err, "invalid output '%s': expected FILE.h5 or FILE.h5:/dataset", opt->output);
  return 0;
}

static void print_plan(const xio_matrix *in, uint64_t budget, int nranks,
                       const xio_transpose_stats *stats) {
  char budget_text[32], buffers[32];
  xpose_format_bytes(budget, budget_text, sizeof budget_text);
  xpose_format_bytes(stats->buffer_bytes, buffers, sizeof buffers);
  xpose_report_verbose("%d rank(s), memory budget %s per rank, buffers %s per rank", nranks,
                       budget_text, buffers);
  xpose_report_verbose(
      "%lld pass(es): %lld x %lld grid of blocks up to %lld x %lld (of %lld x %lld)",
      (long long)xio_pass_count(&stats->grid), (long long)stats->grid.row_passes,
      (long long)stats->grid.col_passes, (long long)stats->grid.block_rows,
      (long long)stats->grid.block_cols, (long long)in->rows, (long long)in->cols);
  xpose_report_verbose("time on rank 0: read %.3f s, transpose and exchange %.3f s, write %.3f s",
                       stats->read_seconds, stats->transpose_seconds, stats->write_seconds);
}

/* Collective.  Host or CUDA for this run; with CUDA, each rank's GPU is
 * current afterwards.  --backend auto takes GPUs when every rank has one. */
static int choose_backend(const xpose_cli_options *opt, MPI_Comm comm, xpose_backend_kind *backend,
                          xio_error *err) {
  *backend = XPOSE_BACKEND_HOST;
  if (opt->backend == XPOSE_BACKEND_HOST) return 0;
  int device = -1;
  if (xpose_cuda_select_device(comm, &device) == XPOSE_SUCCESS) {
    *backend = XPOSE_BACKEND_CUDA;
#ifdef XPOSE_HAVE_CUDA
    if (opt->verbose) xpose_report_gpu_map(comm, device); /* every rank has the same argv */
#endif
    return 0;
  }
  if (opt->backend == XPOSE_BACKEND_CUDA)
    return xio_fail(err, "--backend cuda: %s",
#ifdef XPOSE_HAVE_CUDA
                    "not every rank can see a GPU"
#else
                    "this xpose was built without CUDA"
#endif
    );
  return 0;
}

static int run(const xpose_cli_options *opt, MPI_Comm comm) {
  int nranks, exit_code = XPOSE_EXIT_ERROR;
  MPI_Comm_size(comm, &nranks);
  xio_error err = {""};
  dataset_path in_path, out_path;
  xio_matrix in, out;
  xio_matrix_reset(&in);
  xio_matrix_reset(&out);
  xpose_output_file output = {"", ""};
  if (parse_paths(opt, &in_path, &out_path, &err)) {
    xpose_report_error("%s", err.message);
    return XPOSE_EXIT_USAGE;
  }

  xpose_backend_kind backend = XPOSE_BACKEND_HOST;
  if (choose_backend(opt, comm, &backend, &err) || xpose_check_input(comm, in_path.file, &err) ||
      xpose_output_prepare(comm, out_path.file, in_path.file, opt->force, &output, &err) ||
      xio_open_input(comm, in_path.file, in_path.dataset[0] ? in_path.dataset : NULL, &in, &err))
    goto fail;
  char type_text[256];
  xio_type_describe(in.type, type_text, sizeof type_text);
  xpose_report_verbose("input %s:%s, %lld x %lld, %s (%zu bytes per element)", in_path.file,
                       in.dataset, (long long)in.rows, (long long)in.cols, type_text, in.elem_size);

  const uint64_t budget = opt->memory_bytes ? opt->memory_bytes : xpose_default_memory_budget(comm);
  uint64_t gpu_budget = 0;
#ifdef XPOSE_HAVE_CUDA
  if (backend == XPOSE_BACKEND_CUDA)
    gpu_budget = opt->gpu_memory_bytes ? opt->gpu_memory_bytes : xpose_default_gpu_budget(comm);
#endif
  const double start = MPI_Wtime();
  const char *out_dataset = out_path.dataset[0] ? out_path.dataset : in.dataset;
  int skipped = 0;
  if (xio_create_output(comm, output.temp_path, out_dataset, in.type, in.cols, in.rows, &out,
                        &err) ||
      xio_copy_attributes(&in, &out, &skipped, &err))
    goto fail;
  char out_name[sizeof out.dataset]; /* normalized, kept for the reopening and the summary */
  snprintf(out_name, sizeof out_name, "%s", out.dataset);
  if (skipped)
    xpose_report_warning(
        "%d attribute(s) holding references were not copied: references "
        "cannot point from %s into %s",
        skipped, out_path.file, in_path.file);

  xio_transpose_options topt = {budget, gpu_budget, {0}, xpose_report_progress, NULL};
  xpose_config_init(&topt.config);
  topt.config.backend = backend;
  topt.config.exchange = (xpose_exchange_kind)opt->exchange;
  topt.config.max_message_bytes = (size_t)opt->max_message_bytes;
  xio_transpose_stats stats;
  xpose_report_progress_begin();
  if (xio_transpose(&in, &out, &topt, &stats, &err) || xio_close(&out, &err)) goto fail;
  const double seconds = MPI_Wtime() - start;
  print_plan(&in, backend == XPOSE_BACKEND_CUDA ? gpu_budget : budget, nranks, &stats);

  double verify_seconds = 0;
  if (opt->verify) {
    const double t0 = MPI_Wtime();
    int match = 0;
    char detail[256] = "";
    if (xio_open_existing(comm, output.temp_path, out_name, &out, &err) ||
        xio_verify_transpose(&in, &out, budget / 2, &match, detail, sizeof detail, &err) ||
        xio_close(&out, &err))
      goto fail;
    verify_seconds = MPI_Wtime() - t0;
    if (!match) {
      xio_fail(&err, "verification failed: %s is not the transpose of %s:%s (%s)", out_path.file,
               in_path.file, in.dataset, detail);
      exit_code = XPOSE_EXIT_VERIFY;
      goto fail;
    }
    xpose_report_verbose("verified in %.3f s: %s", verify_seconds, detail);
  }
  if (xpose_output_publish(comm, &output, &err)) goto fail;

  const uint64_t bytes = (uint64_t)in.rows * (uint64_t)in.cols * in.elem_size;
  char size_text[32];
  xpose_format_bytes(bytes, size_text, sizeof size_text);
  xpose_report_result(
      "%s:%s (%lld x %lld, %s) -> %s:%s (%lld x %lld): %s, %d rank(s) (%s, %s), %lld pass(es), "
      "%.3f s, %.2f GB/s%s",
      in_path.file, in.dataset, (long long)in.rows, (long long)in.cols, type_text, out_path.file,
      out_name, (long long)in.cols, (long long)in.rows, size_text, nranks,
      backend == XPOSE_BACKEND_CUDA ? "cuda" : "host", stats.exchange,
      (long long)xio_pass_count(&stats.grid), seconds,
      seconds > 0 ? 2.0 * (double)bytes / seconds / 1e9 : 0.0, opt->verify ? ", verified" : "");
  xio_close(&in, &err);
  return XPOSE_EXIT_OK;

fail:
  xpose_report_error("%s", err.message);
  {
    xio_error ignored;
    xio_close(&out, &ignored);
    xio_close(&in, &ignored);
  }
  xpose_output_discard(comm, &output);
  return exit_code;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported once, by us */

  xpose_cli_options opt;
  char error[256];
  int exit_code = XPOSE_EXIT_OK;
  if (xpose_cli_parse(argc, argv, &opt, error, sizeof error) != 0) {
    if (rank == 0) fprintf(stderr, "xpose: %s\nTry 'xpose --help' for more information.\n", error);
    exit_code = XPOSE_EXIT_USAGE;
  } else if (opt.help) {
    if (rank == 0) fputs(xpose_cli_usage(), stdout);
  } else if (opt.version) {
    unsigned major, minor, release;
    H5get_libversion(&major, &minor, &release);
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(mpi_version, &length);
    if (rank == 0)
      printf("xpose %s (HDF5 %u.%u.%u, %.*s)\n", XPOSE_VERSION_STRING, major, minor, release,
             (int)strcspn(mpi_version, ",\n"), mpi_version);
  } else {
    xpose_report_setup("xpose", rank, opt.quiet, opt.verbose);
    exit_code = run(&opt, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return exit_code;
}
