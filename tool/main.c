/* xpose: transpose a 2-D HDF5 dataset with MPI ranks, out of core. */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "file_safety.h"
#include "gpus.h"
#include "h5_matrix.h"
#include "h5_transpose.h"
#include "h5_types.h"
#include "h5_verify.h"
#include "node_memory.h"
#include "options.h"
#include "report.h"
#include "session.h"
#include "size.h"
#include "xpose.h"

typedef struct {
  char file[4096], dataset[512];
} dataset_path;

static int parse_paths(const tool_options *opt, dataset_path *in, dataset_path *out,
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
  tool_format_bytes(budget, budget_text, sizeof budget_text);
  tool_format_bytes(stats->buffer_bytes, buffers, sizeof buffers);
  tool_report_verbose("%d rank(s), memory budget %s per rank, buffers %s per rank", nranks,
                      budget_text, buffers);
  tool_report_verbose(
      "%lld pass(es): %lld x %lld grid of blocks up to %lld x %lld (of %lld x %lld)",
      (long long)xio_pass_count(&stats->grid), (long long)stats->grid.row_passes,
      (long long)stats->grid.col_passes, (long long)stats->grid.block_rows,
      (long long)stats->grid.block_cols, (long long)in->rows, (long long)in->cols);
  tool_report_verbose("time on rank 0: read %.3f s, transpose and exchange %.3f s, write %.3f s",
                      stats->read_seconds, stats->transpose_seconds, stats->write_seconds);
}

/* Collective.  Host or CUDA for this run; with CUDA, each rank's GPU is
 * current afterwards.  --backend auto takes GPUs when every rank has one,
 * and says why not where an xpose built with CUDA runs on the host.
 * Returns an exit status: --backend cuda without GPUs is a usage error. */
static int choose_backend(const tool_options *opt, MPI_Comm comm, xpose_backend_kind *backend,
                          xio_error *err) {
  *backend = XPOSE_BACKEND_HOST;
  if (opt->backend == XPOSE_BACKEND_HOST) return TOOL_EXIT_OK;
  int device = -1;
  if (xpose_cuda_select_device(comm, &device) == XPOSE_SUCCESS) {
    *backend = XPOSE_BACKEND_CUDA;
#ifdef XPOSE_HAVE_CUDA
    /* every rank has the same argv */
    if (opt->verbose && tool_report_gpu_map(comm, device, err)) return TOOL_EXIT_ERROR;
#endif
    return TOOL_EXIT_OK;
  }
#ifdef XPOSE_HAVE_CUDA
  int rank;
  char why[160];
  if (XIO_MPI(MPI_Comm_rank(comm, &rank), err)) return TOOL_EXIT_ERROR;
  tool_why_no_gpu(why, sizeof why);
  /* The lowest rank without a GPU speaks for all. */
  if (why[0]) xio_fail(err, "rank %d can use no GPU: %s", rank, why);
  if (xio_agree(comm, why[0] ? -1 : 0, err) == 0) /* devices seen, but not selected */
    xio_fail(err, "a rank could not select its GPU (--verbose says why)");
  if (opt->backend == XPOSE_BACKEND_AUTO) {
    tool_report_note("transposing on the host: %s", err->message);
    return TOOL_EXIT_OK;
  }
  const char *reason = err->message;
#else
  const char *reason = "this xpose was built without CUDA";
  if (opt->backend == XPOSE_BACKEND_AUTO) return TOOL_EXIT_OK;
#endif
  char message[sizeof err->message];
  snprintf(message, sizeof message, "%s", reason);
  xio_fail(err, "--backend cuda: %s", message);
  return TOOL_EXIT_USAGE;
}

static int run(const tool_options *opt, MPI_Comm comm) {
  int nranks = 0, exit_code = TOOL_EXIT_ERROR;
  xio_error err = {""};
  dataset_path in_path, out_path;
  xio_matrix in, out;
  xio_matrix_reset(&in);
  xio_matrix_reset(&out);
  tool_output_file output = {"", ""};
  if (parse_paths(opt, &in_path, &out_path, &err)) {
    tool_report_error("%s", err.message);
    return TOOL_EXIT_USAGE;
  }

  xpose_backend_kind backend = XPOSE_BACKEND_HOST;
  const int backend_status = choose_backend(opt, comm, &backend, &err);
  if (backend_status != TOOL_EXIT_OK) {
    tool_report_error("%s", err.message);
    return backend_status;
  }
  if (XIO_MPI(MPI_Comm_size(comm, &nranks), &err) || tool_check_input(comm, in_path.file, &err) ||
      tool_output_prepare(comm, out_path.file, in_path.file, opt->force, &output, &err) ||
      xio_open_input(comm, in_path.file, in_path.dataset[0] ? in_path.dataset : NULL, &in, &err))
    goto fail;
  char type_text[256];
  xio_type_describe(in.type, type_text, sizeof type_text);
  tool_report_verbose("input %s:%s, %lld x %lld, %s (%zu bytes per element)", in_path.file,
                      in.dataset, (long long)in.rows, (long long)in.cols, type_text, in.elem_size);

  uint64_t budget = opt->memory_bytes, gpu_budget = 0;
  if (!budget && tool_default_memory_budget(comm, &budget, &err)) goto fail;
#ifdef XPOSE_HAVE_CUDA
  gpu_budget = opt->gpu_memory_bytes;
  if (backend == XPOSE_BACKEND_CUDA && !gpu_budget &&
      tool_default_gpu_budget(comm, &gpu_budget, &err))
    goto fail;
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
    tool_report_warning(
        "%d attribute(s) holding references were not copied: references "
        "cannot point from %s into %s",
        skipped, out_path.file, in_path.file);

  xio_transpose_options topt = {budget, gpu_budget, {0}, tool_report_progress, NULL};
  xpose_config_init(&topt.config);
  topt.config.backend = backend;
  topt.config.exchange = (xpose_exchange_kind)opt->exchange;
  topt.config.max_message_bytes = (size_t)opt->max_message_bytes;
  xio_transpose_stats stats;
  tool_report_progress_begin();
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
      exit_code = TOOL_EXIT_VERIFY;
      goto fail;
    }
    tool_report_verbose("verified in %.3f s: %s", verify_seconds, detail);
  }
  if (tool_output_publish(comm, &output, &err)) goto fail;

  const uint64_t bytes = (uint64_t)in.rows * (uint64_t)in.cols * in.elem_size;
  char size_text[32];
  tool_format_bytes(bytes, size_text, sizeof size_text);
  tool_report_result(
      "%s:%s (%lld x %lld, %s) -> %s:%s (%lld x %lld): %s, %d rank(s) (%s, %s), %lld pass(es), "
      "%.3f s, %.2f GB/s%s",
      in_path.file, in.dataset, (long long)in.rows, (long long)in.cols, type_text, out_path.file,
      out_name, (long long)in.cols, (long long)in.rows, size_text, nranks,
      backend == XPOSE_BACKEND_CUDA ? "cuda" : "host", stats.exchange,
      (long long)xio_pass_count(&stats.grid), seconds,
      seconds > 0 ? 2.0 * (double)bytes / seconds / 1e9 : 0.0, opt->verify ? ", verified" : "");
  xio_close(&in, &err);
  return TOOL_EXIT_OK;

fail:
  tool_report_error("%s", err.message);
  {
    xio_error ignored;
    xio_close(&out, &ignored);
    xio_close(&in, &ignored);
  }
  tool_output_discard(comm, &output);
  return exit_code;
}

int main(int argc, char **argv) {
  int rank;
  int exit_code = tool_session_start("xpose", &argc, &argv, &rank);
  if (exit_code != TOOL_EXIT_OK) return exit_code;
  tool_options opt;
  char error[256];
  if (tool_parse_options(argc, argv, &opt, error, sizeof error) != 0) {
    if (rank == 0) fprintf(stderr, "xpose: %s\nTry 'xpose --help' for more information.\n", error);
    exit_code = TOOL_EXIT_USAGE;
  } else if (opt.help) {
    if (rank == 0) fputs(tool_usage(), stdout);
  } else if (opt.version) {
    unsigned major = 0, minor = 0, release = 0;
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = "MPI";
    int length = 3;
    /* The version line is all there is to say: what cannot be read is left out. */
    if (H5get_libversion(&major, &minor, &release) < 0) major = minor = release = 0;
    if (MPI_Get_library_version(mpi_version, &length) != MPI_SUCCESS)
      snprintf(mpi_version, 4, "MPI");
#if defined(XPOSE_HAVE_NCCL)
    const char *built = "CUDA backend, NCCL exchange";
#elif defined(XPOSE_HAVE_CUDA)
    const char *built = "CUDA backend";
#else
    const char *built = "host backend only";
#endif
    if (rank == 0)
      printf("xpose %s (HDF5 %u.%u.%u, %.*s; %s)\n", XPOSE_VERSION_STRING, major, minor, release,
             (int)strcspn(mpi_version, ",\n"), mpi_version, built);
  } else {
    tool_report_setup("xpose", rank, opt.quiet, opt.verbose);
    exit_code = run(&opt, MPI_COMM_WORLD);
  }
  return tool_session_end("xpose", rank, exit_code);
}
