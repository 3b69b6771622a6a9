/* xpose: transpose a dataset of an HDF5 or netCDF-4 file, or permute its
 * axes, with MPI ranks, out of core; `xpose verify` checks an output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cleanup_watchdog.h"
#include "dry_run.h"
#include "gpus.h"
#include "h5_transpose.h"
#include "h5_types.h"
#include "host_threads.h"
#include "input_file.h"
#include "input_view.h"
#include "make_output.h"
#include "moves.h"
#include "mpi_hints.h"
#include "node_memory.h"
#include "options.h"
#include "output_file.h"
#include "report.h"
#include "resume.h"
#include "run.h"
#include "session.h"
#include "size.h"
#include "stop_signals.h"
#include "summary.h"
#include "verification.h"

/* Collective.  The output's name taken (a partial found is another run's
 * work: kept); a usage error or not. */
static int prepare_output(transpose_run *run, xio_error *err) {
  const tool_options *opt = run->opt;
  /* --plan keeps a partial it would start over from: it writes nothing */
  if (tool_output_prepare(run->comm, run->out_path.file, run->input_files, run->input_count,
                          opt->force,
                          opt->resume || (opt->plan && opt->force) ? TOOL_PARTIAL_KEEP
                          : opt->force                             ? TOOL_PARTIAL_REPLACE
                                                                   : TOOL_PARTIAL_REFUSE,
                          run->kind->store, &run->output, err) == 0)
    return TOOL_EXIT_OK;
  return run->output.usage_error ? TOOL_EXIT_USAGE : TOOL_EXIT_ERROR;
}

/* Collective.  The run's input checked, its datasets chosen and the first
 * opened, the output's name taken; the view of a netCDF-3 input or of
 * inputs joined made under the output's lock before the datasets are
 * chosen from it, and filled after.
 * An exit status. */
static int open_input_and_output(transpose_run *run, xio_error *err) {
  if (XIO_MPICHECK(MPI_Comm_rank(run->comm, &run->rank), err) ||
      XIO_MPICHECK(MPI_Comm_size(run->comm, &run->nranks), err) || tool_check_inputs(run, err))
    return TOOL_EXIT_ERROR;
  int code = viewed(run) ? prepare_output(run, err) : TOOL_EXIT_OK;
  if (code == TOOL_EXIT_OK && viewed(run) && tool_view_make(run, err)) code = TOOL_EXIT_ERROR;
  if (code == TOOL_EXIT_OK) code = tool_choose_datasets(run, err);
  if (code == TOOL_EXIT_OK && !viewed(run)) code = prepare_output(run, err);
  if (code != TOOL_EXIT_OK) return code;
  run->keep_partial = run->output.partial_found;
  if (run->output.lock_note[0]) tool_report_warning("%s", run->output.lock_note);
  return tool_open_filled_input(run, err) ? TOOL_EXIT_ERROR : TOOL_EXIT_OK;
}

/* Collective.  The budgets: as given, or by default; one of too many
 * passes raised (the same in a resumed run: the same passes). */
static int set_budgets(transpose_run *run, xio_error *err) {
  run->budget = run->opt->memory_bytes;
  if (!run->budget) {
    char source[512], budget_text[32];
    if (tool_default_memory_budget(run->comm, &run->budget, source, sizeof source, err)) return -1;
    tool_format_bytes(run->budget, budget_text, sizeof budget_text);
    tool_report_verbose("memory budget %s per rank: %s", budget_text, source);
  }
  const uint64_t floor = tool_budget_floor(run->budget, matrix_bytes(&run->in), run->nranks);
  if (floor > run->budget) {
    char given[32], raised[32];
    tool_format_bytes(run->budget, given, sizeof given);
    tool_format_bytes(floor, raised, sizeof raised);
    tool_report_note(
        "--memory %s would take more than %d passes to move %s:%s: raised to %s "
        "per rank",
        given, TOOL_MOST_PASSES, run->in_path.file, run->in.dataset, raised);
    run->budget = floor;
  }
#ifdef XPOSE_HAVE_CUDA
  run->gpu_budget = run->opt->gpu_memory_bytes;
  if (run->backend == XPOSE_BACKEND_CUDA && !run->gpu_budget &&
      tool_default_gpu_budget(run->comm, &run->gpu_budget, err))
    return -1;
#endif
  return 0;
}

/* Collective.  The input and output opened (open_input_and_output), the
 * first dataset folded and described, the budgets.  An exit status. */
static int open_run(transpose_run *run, char type_text[256], xio_error *err) {
  const int opened = open_input_and_output(run, err);
  if (opened != TOOL_EXIT_OK) return opened;
  if (!run->opt->only && run->out_path.dataset[0] &&
      tool_check_output_path_free(run->comm, run->in.file, run->in_path.file, run->in.dataset,
                                  run->out_path.dataset, err))
    return TOOL_EXIT_USAGE;
  const int folded = tool_fold_input(run, NULL, err);
  if (folded != TOOL_EXIT_OK) return folded;
  xio_type_describe(run->in.type, type_text, 256);
  tool_say_dataset(run, type_text);
  return set_budgets(run, err) ? TOOL_EXIT_ERROR : TOOL_EXIT_OK;
}

/* What xio_transpose is asked for: a budget the user gave is filled; the
 * default one (half the node) only up to passes of the size that ran
 * fastest (tool_default_pass_limit). */
static void transpose_options(transpose_run *run, xio_transpose_options *topt) {
  const tool_options *opt = run->opt;
  const int on_gpu = run->backend == XPOSE_BACKEND_CUDA;
  *topt = (xio_transpose_options){.memory_budget = run->budget,
                                  .gpu_memory_budget = run->gpu_budget,
                                  .pass_bytes_limit = tool_default_pass_limit(run),
                                  .progress = tool_report_progress,
                                  .checkpoint = tool_record_progress,
                                  .checkpoint_seconds = opt->checkpoint_seconds,
                                  .checkpoint_user_data = run,
                                  .stop_requested = tool_stop_requested,
                                  .collective_only = opt->io_mpi_only};
  xpose_config_init(&topt->config);
  topt->config.backend = run->backend;
  topt->config.exchange = (xpose_exchange_kind)opt->exchange;
  topt->config.max_message_bytes = (size_t)opt->max_message_bytes;
  topt->config.own_output = on_gpu; /* plans that own their outputs write into other GPUs (p2p) */
  topt->inline_io = tool_io_threads_off();
  topt->config.host_threads = on_gpu ? 0 : run->threads;
}

/* Verbose: the MPI-IO hints and the storage the passes go through. */
static void say_storage(const transpose_run *run) {
  if (!run->opt->verbose) return;
  char hints[1024], in_storage[256], out_storage[256];
  xio_mpi_hints_in_force(run->out.file, hints, sizeof hints);
  tool_report_verbose("MPI-IO hints in force on %s: %s", run->out_path.file, hints);
  xio_describe_storage(&run->in, in_storage, sizeof in_storage);
  xio_describe_storage(&run->out, out_storage, sizeof out_storage);
  tool_report_verbose("storage: input %s; output %s", in_storage, out_storage);
  /* chunks xpose's codec cannot take go through HDF5's pipeline, on one thread */
  if (run->in.filtered && !run->in.codec)
    tool_report_verbose("the input's chunks are inflated by HDF5's pipeline (%s)",
                        run->in.codec_why);
  if (run->out.filtered && !run->out.codec)
    tool_report_verbose("the output's chunks are compressed by HDF5's pipeline (%s)",
                        run->out.codec_why);
}

/* Collective.  The partial output made (or resumed) and every dataset
 * moved into it, then closed with the file's attributes and what
 * parallel HDF5 cannot write.  An exit status. */
static int move_all(transpose_run *run, xio_transpose_options *topt, xio_transpose_stats *stats,
                    xio_error *err) {
  const double start = MPI_Wtime();
  if (tool_start_output(run, topt, err)) return run->stopped ? TOOL_EXIT_STOPPED : TOOL_EXIT_ERROR;
  tool_report_verbose("the partial output made (space reserved, the rest copied): %.3f s",
                      MPI_Wtime() - start);
  char resident[32];
  tool_format_bytes(tool_resident_bytes(), resident, sizeof resident);
  tool_report_verbose(
      "memory: rank 0 holds %s before the passes (MPI, HDF5 and the other "
      "libraries, the files open), beside the budget of xpose's buffers",
      resident);
  run->keep_partial = run->resumed; /* a new partial goes on failure, unless passes get recorded */
  run->compressed |= run->out.filtered; /* a resumed one's */
  say_storage(run);
  if (run->resumed) {
    topt->resume_from = &run->record.progress;
    char done[256];
    tool_describe_progress(run, done, sizeof done);
    tool_report_note("resuming from %s: %s done", run->output.partial_path, done);
  }
  int moved;
  const double passes_began = MPI_Wtime();
  for (;;) { /* each dataset in turn */
    tool_progress_begin(run, topt->resume_from ? topt->resume_from->passes_done : 0);
    const double began = MPI_Wtime();
    moved = tool_move_dataset(run, topt, stats, err);
    if (moved == 0) tool_note_dataset_done(run, MPI_Wtime() - began);
    if (moved != 0 || run->dataset_index + 1 == run->rearranged.count) break;
    if ((moved = tool_next_dataset(run, topt, err)) != 0) break;
  }
  const double passes_ended = MPI_Wtime();
  run->keep_partial = tool_work_recorded(run);
  /* A failed read may be the input changing under the run (a truncated
   * file ends early): then that is the error, and nothing is kept. */
  xio_error changed;
  if (moved < 0 && tool_check_input_unchanged(run, &changed)) *err = changed;
  if (moved == XIO_STOPPED) return TOOL_EXIT_STOPPED;
  if (moved != 0 || run->kind->finish(run, err)) {
    if (!run->scratch_lost) return TOOL_EXIT_ERROR;
    run->keep_partial = 0; /* wrong: never to be resumed */
    return TOOL_EXIT_VERIFY;
  }
  tool_report_verbose("the passes: %.3f s; the output closed: %.3f s", passes_ended - passes_began,
                      MPI_Wtime() - passes_ended);
  return TOOL_EXIT_OK;
}

/* Collective.  The output read back (unless --no-verify) and, unless a
 * stop came first or the input changed, published.  An exit status. */
static int check_and_publish(transpose_run *run, double *verify_seconds, xio_error *err) {
  if (run->opt->verify != TOOL_VERIFY_NONE) {
    const int verified = tool_verify_output(run, verify_seconds, err);
    if (verified == XIO_STOPPED) return TOOL_EXIT_STOPPED;
    if (verified == TOOL_EXIT_VERIFY) run->keep_partial = 0; /* wrong: never to be resumed */
    if (verified) return verified == TOOL_EXIT_VERIFY ? TOOL_EXIT_VERIFY : TOOL_EXIT_ERROR;
    tool_report_verbose("read back and verified in %.3f s", *verify_seconds);
  }
  /* A stop asked for before this point keeps the verified partial for
   * --resume (which publishes it); one after it comes too late to change
   * the outcome, and the run ends as it would have. */
  if (tool_stop_signal_agreed(run->comm)) return TOOL_EXIT_STOPPED;
  if (tool_check_input_unchanged(run, err)) return TOOL_EXIT_ERROR; /* removes the partial */
  run->publish_failed = tool_output_publish(run->comm, &run->output, err) != 0;
  run->published = !run->publish_failed;
  return run->published ? TOOL_EXIT_OK : TOOL_EXIT_ERROR;
}

/* --json's object for a run that did not succeed. */
static void error_json(tool_json *j, int exit_code, const char *message) {
  static const char *const status[] = {"ok", "error", "usage error", "verification failed",
                                       "stopped"};
  tool_json_begin(j);
  tool_json_string(j, "status", status[exit_code]);
  tool_json_int(j, "exit_code", exit_code);
  tool_json_string(j, "message", message);
}

/* --json's object should the watchdog end this rank (rank 0 only): its
 * exit status is 1 whatever the run's was. */
static const char *watchdog_json(const transpose_run *run) {
  static tool_json j; /* 64 KiB: not on the stack */
  if (!run->opt->json || run->rank != 0) return NULL;
  const char *why = tool_report_last_error();
  error_json(&j, TOOL_EXIT_ERROR, why[0] ? why : "cleaning up after the run's end did not finish");
  return tool_json_end(&j);
}

/* Collective.  What the run made and does not keep removed (a watchdog
 * removes it should this hang), the files closed, the output's name
 * given back. */
static void release_run(transpose_run *run) {
  const tool_output_file *out = &run->output;
  const int drop = out->owned && !run->keep_partial;
  const char *const leftovers[] = {drop ? out->partial_path : NULL, drop ? out->record_path : NULL,
                                   out->owned && run->rank == 0 ? out->lock_path : NULL};
  const char *all[4 + TOOL_SCRATCH_FILES] = {leftovers[0], leftovers[1], leftovers[2],
                                             run->view_made ? out->view_path : NULL};
  for (int j = 0; j + 1 < run->moves; j++)
    all[4 + j] = drop && run->rank == 0 ? scratch_path(run, j) : NULL;
  tool_watchdog_arm(all, 4 + TOOL_SCRATCH_FILES, watchdog_json(run));
  xio_error ignored;
  xio_close(&run->out, &ignored);
  xio_close(&run->in, &ignored);
  tool_drop_scratch(run, drop);
  tool_output_release(run->comm, &run->output, run->keep_partial);
  tool_watchdog_disarm();
}

/* Collective.  Every dataset moved, the output checked and published,
 * the result said.  An exit status. */
static int transpose_and_publish(transpose_run *run, double began, const char *type_text,
                                 xio_error *err) {
  const double start = MPI_Wtime();
  tool_report_verbose("the run's set-up (MPI, GPU, input, budget): %.3f s", start - began);
  xio_transpose_options topt;
  xio_transpose_stats stats;
  transpose_options(run, &topt);
  int code = move_all(run, &topt, &stats, err);
  if (code != TOOL_EXIT_OK) return code;
  const double moved_seconds = MPI_Wtime() - start;
  tool_print_plan(&run->in, run->backend == XPOSE_BACKEND_CUDA ? run->gpu_budget : run->budget,
                  run->nranks, &stats);
  double verify_seconds = 0;
  code = check_and_publish(run, &verify_seconds, err);
  if (code == TOOL_EXIT_OK)
    tool_print_summary(run, &stats, type_text, moved_seconds + verify_seconds, verify_seconds);
  return code;
}

/* Collective.  The end of every run: what a stopped or failed run kept
 * said, and what it made and does not keep removed; a published output
 * (or a verified partial that could not be renamed) left as it is. */
static int end_run(transpose_run *run, int code, xio_error *err) {
  if (code == TOOL_EXIT_STOPPED)
    tool_say_stopped(run);
  else if (run->publish_failed) /* err says where the verified transpose is */
    tool_report_error("%s", err->message);
  else if (code != TOOL_EXIT_OK)
    tool_say_failed(run, code, err);
  if (run->published || run->publish_failed)
    xio_close(&run->in, err);
  else
    release_run(run);
  tool_view_drop(run);
  tool_dataset_list_free(&run->rearranged);
  free(run->done);
  return code;
}

/* Collective.  --plan: the run's plan said, nothing written, nothing
 * removed but the lock (and a netCDF-3 input's view). */
static int plan_only(transpose_run *run, xio_error *err) {
  xio_transpose_options topt;
  run->keep_partial = 1;
  transpose_options(run, &topt);
  return tool_dry_run(run, &topt, err) ? TOOL_EXIT_ERROR : TOOL_EXIT_OK;
}

/* Collective.  `xpose IN OUT`: set up, the passes, publish; one way out
 * for every outcome.  An exit status. */
static int run_transpose(const tool_options *opt, MPI_Comm comm) {
  const double began = MPI_Wtime();
  transpose_run run_state, *run = &run_state;
  xio_error err = {""};
  const int begun = tool_run_begin(run, opt, comm, &err);
  if (begun != TOOL_EXIT_OK) return begun;
  const int backend_status = tool_choose_backend(opt, comm, &run->backend, &err);
  if (backend_status != TOOL_EXIT_OK) {
    tool_report_error("%s", err.message);
    return backend_status;
  }
  char type_text[256] = "";
  int code = open_run(run, type_text, &err);
  if (code == TOOL_EXIT_OK && opt->plan)
    code = plan_only(run, &err);
  else if (code == TOOL_EXIT_OK && run->output.final_exists) { /* --resume after it published */
    xio_transpose_options topt;
    transpose_options(run, &topt);
    code = tool_check_already_done(run, &topt, type_text, &err);
  } else if (code == TOOL_EXIT_OK)
    code = transpose_and_publish(run, began, type_text, &err);
  return end_run(run, code, &err);
}

/* --json's object for a run that did not succeed, printed: rank 0's, or
 * with `here` the calling rank's. */
static void print_error_json(int exit_code, const char *message, int here) {
  tool_json j;
  error_json(&j, exit_code, message);
  if (here)
    tool_json_print_here(&j);
  else
    tool_json_print(&j);
}

/* The job is aborted (h5_error.h): this rank's object is the one printed. */
static void print_abort_json(const char *message) { print_error_json(TOOL_EXIT_ERROR, message, 1); }

/* --json among the options, for a command line that does not parse. */
static int asks_for_json(int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--json") == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], TOOL_METADATA_WALK) == 0)
    return tool_metadata_walk_main(argv[2]);
  int rank;
  const int held = tool_stop_signals_hold(); /* until the handlers are in */
  int exit_code = tool_session_start("xpose", &argc, &argv, &rank);
  if (exit_code != TOOL_EXIT_OK) {
    if (asks_for_json(argc, argv)) print_error_json(exit_code, "MPI could not start", 1);
    return exit_code;
  }
  const int signals_handled = held == 0 && tool_stop_signals_install() == 0;
  tool_options opt;
  char error[256];
  if (tool_parse_options(argc, argv, &opt, error, sizeof error) != 0) {
    if (rank == 0) fprintf(stderr, "xpose: %s\nTry 'xpose --help' for more information.\n", error);
    exit_code = TOOL_EXIT_USAGE;
    if (rank == 0 && asks_for_json(argc, argv)) print_error_json(exit_code, error, 1);
  } else if (opt.help) {
    if (rank == 0) fputs(tool_usage(), stdout);
  } else if (opt.version) {
    if (rank == 0) tool_print_version();
  } else {
    tool_report_setup("xpose", rank, opt.quiet, opt.verbose);
    if (opt.json) xio_set_abort_hook(print_abort_json);
    if (!signals_handled) {
      tool_report_error("cannot handle stop signals");
      exit_code = TOOL_EXIT_ERROR;
    } else {
      exit_code =
          opt.check ? tool_run_check(&opt, MPI_COMM_WORLD) : run_transpose(&opt, MPI_COMM_WORLD);
    }
    if (opt.json && exit_code != TOOL_EXIT_OK && !(opt.check && exit_code == TOOL_EXIT_VERIFY))
      print_error_json(exit_code, tool_report_last_error(), 0);
  }
  return tool_session_end("xpose", rank, exit_code);
}
