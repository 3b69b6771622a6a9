/* What a run says of itself (summary.h). */
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "size.h"

void tool_print_plan(const xio_matrix *in, uint64_t budget, int nranks,
                     const xio_transpose_stats *stats) {
  char budget_text[32], buffers[32];
  const xio_pass_grid *grid = &stats->done.grid;
  tool_format_bytes(budget, budget_text, sizeof budget_text);
  tool_format_bytes(stats->buffer_bytes, buffers, sizeof buffers);
  tool_report_verbose("%d rank(s), memory budget %s per rank, buffers %s per rank", nranks,
                      budget_text, buffers);
  tool_report_verbose(
      "rank 0 before the first pass: %.3f s (allocating the buffers %.3f s); %d "
      "checkpoint(s) (syncs, records) %.3f s, the last %.3f s",
      stats->setup_seconds, stats->buffers_seconds, stats->checkpoints, stats->checkpoint_seconds,
      stats->last_checkpoint_seconds);
  char items[64] = "";
  if (in->items > 1) snprintf(items, sizeof items, " each of %lld matrices", (long long)in->items);
  tool_report_verbose(
      "%lld pass(es): %lld x %lld grid of blocks up to %lld x %lld (of%s %lld x %lld)",
      (long long)xio_pass_count(grid), (long long)grid->row_passes, (long long)grid->col_passes,
      (long long)grid->block_rows, (long long)grid->block_cols, items, (long long)grid->rows,
      (long long)grid->cols);
  if (stats->overlapped)
    tool_report_verbose(
        "time on rank 0: %s: read %.3f s, write %.3f s, both in flight %.3f s; "
        "main thread: transpose and exchange %.3f s, checksums %.3f s (by %s), "
        "waiting for I/O %.3f s",
        stats->io, stats->read_seconds, stats->write_seconds, stats->both_seconds,
        stats->transpose_seconds, stats->checksum_seconds, stats->summed_by, stats->wait_seconds);
  else
    tool_report_verbose(
        "time on rank 0, one after the other: %s: read %.3f s, write %.3f s; "
        "transpose and exchange %.3f s, checksums %.3f s (by %s)",
        stats->io, stats->read_seconds, stats->write_seconds, stats->transpose_seconds,
        stats->checksum_seconds, stats->summed_by);
  if (stats->codec_declined)
    tool_report_verbose(
        "the output's chunks were compressed by HDF5's pipeline: %s (more "
        "--memory lets xpose compress them on every thread)",
        stats->codec_declined);
  if (stats->codec_reads.used)
    tool_report_verbose(
        "of the reads on rank 0: locating the input's chunks %.3f s; its "
        "threads together reading them %.3f s, decoding them %.3f s",
        stats->codec_reads.locate_seconds, stats->codec_reads.fetch_seconds,
        stats->codec_reads.decode_seconds);
  if (stats->codec_wrote) {
    char stored[32];
    tool_format_bytes(stats->stored_bytes, stored, sizeof stored);
    tool_report_verbose(
        "of the writes on rank 0: compressing its chunks %.3f s, storing every "
        "rank's (%s) %.3f s",
        stats->encode_seconds, stored, stats->store_seconds);
  }
}

void tool_describe_pair(tool_json *j, const transpose_run *run, const char *type_text,
                        const char *out_dataset) {
  tool_json_int(j, "datasets", run->rearranged.count); /* the rest: of the last one */
  tool_json_string(j, "input", run->in_path.file);
  if (run->joined) tool_json_int(j, "inputs", run->input_count); /* input: the first */
  tool_json_string(j, "input_dataset", run->in.dataset);
  tool_json_string(j, "output", run->out_path.file);
  tool_json_string(j, "output_dataset", out_dataset);
  tool_json_int(j, "rows", (long long)run->in.rows); /* of the matrix the axes fold into */
  tool_json_int(j, "cols", (long long)run->in.cols);
  tool_json_string(j, "input_shape", run->in_shape);
  tool_json_string(j, "output_shape", run->out_shape);
  tool_json_string(j, "type", type_text);
}

/* Collective, for a store: what each rank wrote, rank 0's gathered (NULL
 * elsewhere, or where it cannot be had): bytes, then files, of each. */
static uint64_t *gather_written(const transpose_run *run) {
  if (!run->kind->store) return NULL; /* rank 0 wrote every rank's */
  uint64_t mine[2] = {run->wrote_bytes, run->wrote_files};
  uint64_t *all = run->rank == 0 ? calloc(2 * (size_t)run->nranks, sizeof *all) : NULL;
  int have = run->rank != 0 || all;
  xio_error ignored;
  if (XIO_MPICHECK(MPI_Bcast(&have, 1, MPI_INT, 0, run->comm), &ignored) || !have ||
      XIO_MPICHECK(MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, run->comm),
                   &ignored)) {
    free(all);
    return NULL;
  }
  return all;
}

/* --json's and --verbose's account of what each rank wrote. */
static void say_written(const transpose_run *run, const uint64_t *all, tool_json *j) {
  if (!all) return;
  if (j) {
    tool_json_array_begin(j, "written_by_rank");
    for (int r = 0; r < run->nranks; r++) {
      tool_json_object_begin(j);
      tool_json_int(j, "bytes", (long long)all[2 * r]);
      tool_json_int(j, "files", (long long)all[2 * r + 1]);
      tool_json_object_end(j);
    }
    tool_json_array_end(j);
    return;
  }
  char line[2048] = "", bytes[32];
  for (int r = 0, n = 0; r < run->nranks && n >= 0 && (size_t)n < sizeof line; r++) {
    tool_format_bytes(all[2 * r], bytes, sizeof bytes);
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%s in %llu", r ? ", " : "", bytes,
                  (unsigned long long)all[2 * r + 1]);
  }
  tool_report_verbose("chunk files written by each rank, in rank order: %s", line);
}

void tool_print_summary(const transpose_run *run, const xio_transpose_stats *stats,
                        const char *type_text, double total_seconds, double verify_seconds) {
  uint64_t *written = gather_written(run);
  const tool_options *opt = run->opt;
  const uint64_t bytes = run->moved_bytes + matrix_bytes(&run->in); /* run->in: the last */
  const long long passes = (long long)(run->moved_passes + xio_pass_count(&stats->done.grid));
  char size_text[32];
  tool_format_bytes(bytes, size_text, sizeof size_text);
  const double rate = total_seconds > 0 ? 2.0 * (double)bytes / total_seconds / 1e9 : 0.0;
  const char *verification = opt->verify == TOOL_VERIFY_NONE    ? "not read back"
                             : opt->verify == TOOL_VERIFY_INPUT ? "verified against the input"
                                                                : "verified";
  const char *backend_name = run->backend == XPOSE_BACKEND_CUDA ? "cuda" : "host";
  const char *out_name = output_name(run, run->dataset_index);
  if (opt->json) {
    tool_json j;
    tool_json_begin(&j);
    tool_json_string(&j, "status", "ok");
    tool_json_int(&j, "exit_code", TOOL_EXIT_OK);
    tool_describe_pair(&j, run, type_text, out_name);
    tool_json_int(&j, "bytes", (long long)bytes);
    tool_json_int(&j, "ranks", run->nranks);
    tool_json_string(&j, "backend", backend_name);
    tool_json_string(&j, "exchange", stats->exchange);
    tool_json_int(&j, "passes", passes);
    tool_json_bool(&j, "resumed", run->resumed);
    tool_json_number(&j, "seconds", total_seconds);
    tool_json_number(&j, "verify_seconds", verify_seconds);
    tool_json_number(&j, "gb_per_s", rate);
    tool_json_string(&j, "verification", verification);
    tool_json_array_begin(&j, "rearranged"); /* those this run moved, resumed or not */
    for (int k = 0; k < run->done_count; k++) {
      const tool_dataset_done *d = &run->done[k];
      tool_json_object_begin(&j);
      tool_json_string(&j, "input_dataset", d->dataset);
      tool_json_string(&j, "output_dataset", run->out_path.dataset[0] ? out_name : d->dataset);
      tool_json_string(&j, "input_shape", d->in_shape);
      tool_json_string(&j, "output_shape", d->out_shape);
      tool_json_number(&j, "seconds", d->seconds);
      tool_json_object_end(&j);
    }
    tool_json_array_end(&j);
    say_written(run, written, &j);
    tool_json_print(&j);
  } else if (run->rearranged.count > 1) {
    char how[1100];
    snprintf(how, sizeof how, "%s%.500s%s%.500s%s", opt->dims ? "each " : "",
             opt->dims ? opt->dims : "", opt->dims && opt->chunks ? ", " : "",
             opt->chunks ? opt->chunks : "", run->join_only ? "joined alone" : "");
    tool_report_result(
        "%s -> %s: %d datasets rearranged (%s ... %s, %s), the rest copied: %s, %d "
        "rank(s) (%s, %s), %lld pass(es)%s, %.3f s, %.2f GB/s, %s",
        run->input_shown, run->out_path.file, run->rearranged.count, run->rearranged.paths[0],
        run->rearranged.paths[run->rearranged.count - 1], how, size_text, run->nranks, backend_name,
        stats->exchange, passes, run->resumed ? " (resumed)" : "", total_seconds, rate,
        verification);
    for (int k = 0; k < run->done_count; k++)
      tool_report_result("  %s: %s -> %s, %.3f s", run->done[k].dataset, run->done[k].in_shape,
                         run->done[k].out_shape, run->done[k].seconds);
  } else {
    tool_report_result(
        "%s:%s (%s, %s) -> %s:%s (%s%s): %s, %d rank(s) (%s, %s), %lld "
        "pass(es)%s, %.3f s, %.2f GB/s, %s",
        run->input_shown, run->in.dataset, run->in_shape, type_text, run->out_path.file, out_name,
        run->out_shape,
        run->reversed           ? "; all axes reversed, as numpy's .T"
        : run->folds[0].rechunk ? "; rechunked"
                                : "",
        size_text, run->nranks, backend_name, stats->exchange, passes,
        run->resumed ? " (resumed)" : "", total_seconds, rate, verification);
  }
  if (!opt->json) say_written(run, written, NULL);
  free(written);
}

void tool_say_dataset(const transpose_run *run, const char *type_text) {
  char which[64] = "";
  if (run->rearranged.count > 1)
    snprintf(which, sizeof which, " (dataset %d of %d)", run->dataset_index + 1,
             run->rearranged.count);
  char moves[64] = "";
  if (run->folds[0].rechunk)
    snprintf(moves, sizeof moves, " (rechunked: exchanged, then transposed back)");
  if (run->moves > 1)
    snprintf(moves, sizeof moves, " first of %d moves, through scratch files,", run->moves);
  tool_report_verbose(
      "input %s:%s%s, %s -> %s, %s; moved%s as a %lld x %lld matrix of %zu-byte "
      "elements",
      run->input_shown, run->in.dataset, which, run->in_shape, run->out_shape, type_text, moves,
      (long long)run->in.rows, (long long)run->in.cols, run->in.elem_size);
}

void tool_describe_phases(const transpose_run *run, const xio_phases_plan *plan, char *text,
                          size_t size) {
  char chunk[256] = "", scratch[32], least[32];
  size_t used = 0;
  for (int a = 0; a < plan->ndims && used < sizeof chunk; a++)
    used += (size_t)snprintf(chunk + used, sizeof chunk - used, "%s%lld", a ? " x " : "",
                             (long long)(a ? plan->chunk[a] : plan->batch));
  tool_format_bytes(plan->scratch_bytes, scratch, sizeof scratch);
  tool_format_bytes(plan->least_budget, least, sizeof least);
  snprintf(text, size,
           "in two phases through %.1000s: %lld slab(s) of %lld record(s) cut into pieces of %s "
           "(at most %s, shuffle + Blosc lz4), then %lld output chunk(s) gathered, %lld at once "
           "per rank or more as they compress (these chunks need --memory %s per rank at least)",
           scratch_path(run, 0), (long long)plan->batches, (long long)plan->batch, chunk, scratch,
           (long long)plan->chunks, (long long)plan->chunks_at_once, least);
}

void tool_say_phases(const transpose_run *run, const xio_phases_plan *plan) {
  char text[1600];
  tool_describe_phases(run, plan, text, sizeof text);
  if (plan->bands)
    tool_report_verbose("%s: the passes would deal its %lld band(s) of whole output chunks to %d "
                        "rank(s) unevenly, so it moves %s",
                        run->in.dataset, (long long)plan->bands, run->nranks, text);
  else
    tool_report_verbose("%s: no pass of the budget holds whole output chunks, so it moves %s",
                        run->in.dataset, text);
}

void tool_progress_begin(const transpose_run *run, int64_t passes_before) {
  char what[700] = "";
  if (run->rearranged.count > 1)
    snprintf(what, sizeof what, "%.512s (%d of %d)", run->in.dataset, run->dataset_index + 1,
             run->rearranged.count);
  if (run->moves > 1)
    snprintf(what + strlen(what), sizeof what - strlen(what), "%smove %d of %d",
             what[0] ? ", " : "", run->move + 1, run->moves);
  tool_report_progress_begin(passes_before, what);
}

void tool_note_dataset_done(transpose_run *run, double seconds) {
  if (run->rank != 0) return;
  tool_dataset_done *more = realloc(run->done, (size_t)(run->done_count + 1) * sizeof *more);
  if (!more) return; /* a line fewer in the summary */
  run->done = more;
  tool_dataset_done *d = &run->done[run->done_count++];
  snprintf(d->dataset, sizeof d->dataset, "%s", run->in.dataset);
  snprintf(d->in_shape, sizeof d->in_shape, "%s", run->in_shape);
  snprintf(d->out_shape, sizeof d->out_shape, "%s", run->out_shape);
  d->seconds = seconds;
}
