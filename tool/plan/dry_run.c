/* `xpose --plan` (dry_run.h): the run's plan, computed by the functions the
 * run plans with, on matrices described but not made. */
#define _POSIX_C_SOURCE 200809L /* posix_fadvise */
#include "dry_run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_copy.h"
#include "h5_scales.h"
#include "h5_types.h"
#include "make_output.h"
#include "matrix_zarr.h"
#include "moves.h"
#include "node_memory.h"
#include "output_zarr.h"
#include "pass_io.h"
#include "pass_plan.h"
#include "raw_dataset.h"
#include "rechunk_phases.h"
#include "report.h"
#include "sample_rates.h"
#include "size.h"
#include "summary.h"

/* Copied datasets --json lists (its object has a fixed size); the count is
 * always given. */
enum { JSON_COPIED_MOST = 256 };

/* What the plan adds up, and where it says it. */
typedef struct {
  tool_json *json;    /* --json: the object being built; NULL: lines of text */
  uint64_t output;    /* bytes: the output's space, */
  uint64_t scratch;   /* the most the scratch files hold at once, */
  uint64_t storage;   /* and all that is read and written on storage */
  double compute;     /* seconds of inflating and compressing, on one rank */
  int output_guessed; /* a compressed output's size: its input's (as compressed, or not) */
  int output_bound;   /* that of an uncompressed input: at most that */
  int copied, listed; /* datasets copied as they are, and listed in the JSON */
  int verify;         /* the run's --verify choice */
} plan_totals;

/* Collective: whether every rank runs on one node (raw I/O needs one page cache). */
static int on_one_node(MPI_Comm comm, int nranks, xio_error *err) {
  int node_ranks = 0, one = 0, all = 0;
  if (tool_node_ranks(comm, &node_ranks, err)) return -1;
  one = node_ranks == nranks;
  return XIO_MPICHECK(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_MIN, comm), err) ? -1 : all;
}

/* Local.  A rechunk in two phases (rechunk_phases.h), planned into
 * `text` (and the JSON); its scratch file counted. */
static int plan_phases(const transpose_run *run, const xio_phases_plan *p, plan_totals *t,
                       char *text, size_t size) {
  const size_t used = strlen(text);
  tool_describe_phases(run, p, text + used, size - used);
  if (p->scratch_bytes > t->scratch) t->scratch = p->scratch_bytes;
  t->storage += 2 * p->scratch_bytes; /* written, read */
  if (t->json) {
    tool_json_object_begin(t->json);
    tool_json_string(t->json, "io", "two phases");
    tool_json_int(t->json, "slabs", (long long)p->batches);
    tool_json_int(t->json, "slab_records", (long long)p->batch);
    tool_json_int(t->json, "chunks_at_once", (long long)p->chunks_at_once);
    tool_json_int(t->json, "scratch_bytes", (long long)p->scratch_bytes);
    tool_json_int(t->json, "least_memory_bytes", (long long)p->least_budget);
    tool_json_object_end(t->json);
  }
  return 0;
}

/* Local.  Move j of run->in's order planned into `text` (and the JSON):
 * its passes as xio_transpose would plan them, into `dst` (described). */
static int plan_move(transpose_run *run, const xio_transpose_options *topt, int j, int one_node,
                     const xio_matrix *dst, plan_totals *t, char *text, size_t size,
                     xio_error *err) {
  xio_matrix src;
  if (tool_planned_source(run, j, &src, err)) return -1;
  xio_transpose_options planned = *topt;
  run->src = &src; /* the pass limit is the source's */
  tool_limit_passes(run, &planned);
  run->src = &run->in;
  uint64_t base = 0;
  int raw = one_node && !run->opt->io_mpi_only && !src.shape.rechunk && !dst->chunked &&
            (j > 0 || xio_raw_usable(&run->in, &base));
  const int codec = !raw && xio_pass_codec_writes(&src, dst, &planned, run->nranks);
  xio_phases_plan phases;
  const int phased =
      run->moves == 1 ? xio_phases_planned(&src, dst, &planned, run->nranks, &phases, err) : 0;
  if (phased) return phased < 0 ? -1 : plan_phases(run, &phases, t, text, size);
  if (run->moves == 1 && tool_refuse_small_budget(run, &phases, planned.memory_budget, err))
    return -1;
  xio_pass_grid grid;
  int64_t unit = 1;
  if (xio_pass_plan_with_codec(&src, dst, &planned, run->nranks, codec, &raw, &grid, &unit, err))
    return -1;
  const int chunks = unit > 1;
  const long long passes = (long long)xio_pass_count(&grid);
  const size_t used = strlen(text);
  snprintf(text + used, size - used, "%s%lld pass(es) of blocks up to %lld x %lld (%s)",
           j == 0 ? "" : ", then ", passes, (long long)grid.block_rows, (long long)grid.block_cols,
           raw ? "raw I/O"
           : chunks && run->kind->store && j + 1 == run->moves
               ? "MPI-IO, chunks compressed and written by every rank"
           : chunks ? "MPI-IO, chunks compressed on every rank, written by rank 0"
                    : "MPI-IO");
  if (t->json) {
    tool_json_object_begin(t->json);
    tool_json_int(t->json, "passes", passes);
    tool_json_int(t->json, "block_rows", (long long)grid.block_rows);
    tool_json_int(t->json, "block_cols", (long long)grid.block_cols);
    tool_json_string(t->json, "io", raw ? "raw" : chunks ? "mpi-io, chunks by rank 0" : "mpi-io");
    tool_json_object_end(t->json);
  }
  return 0;
}

/* Local.  What move j writes where it is not the last: a scratch file,
 * contiguous (moves.h), described. */
static int plan_scratch(const transpose_run *run, int j, xio_matrix *scratch, xio_error *err) {
  const xio_storage contiguous = {.layout = XIO_LAYOUT_CONTIGUOUS};
  xio_matrix source;
  char text[256];
  if (tool_planned_source(run, j, &source, err)) return -1;
  const xio_shape shape = xio_shape_transposed(&source.shape);
  return xio_plan_dataset(NULL, &contiguous, &shape, run->in.type, &source, scratch, text,
                          sizeof text, err);
}

/* Local.  The bytes dataset run->in takes in the input's storage. */
static uint64_t stored_bytes(const transpose_run *run) {
  const hsize_t stored = viewed(run) ? 0 : H5Dget_storage_size(run->in.dset);
  return stored ? (uint64_t)stored : matrix_bytes(&run->in);
}

/* Collective.  Where the input or the output is compressed, the seconds
 * one rank would take to inflate and compress run->in's values, at the
 * rates a sample goes through HDF5 at now, on each of its threads where
 * xpose's codec takes the chunks (`out` is the output, planned). */
static int add_compute(const transpose_run *run, const xio_storage *storage,
                       const xio_shape *out_shape, const xio_matrix *out, plan_totals *t,
                       xio_error *err) {
  if (!run->in.filtered && !out->filtered) return 0;
  xio_sample_rates rates;
  if (xio_sample_rates_measure(&run->in, storage, out_shape, &rates, err)) return -1;
  const double bytes = (double)matrix_bytes(&run->in);
  const int read_back = t->verify != TOOL_VERIFY_NONE;
  const double in_threads = run->in.codec ? run->threads : 1,
               out_threads = out->codec ? run->threads : 1;
  /* read (inflated), and the output read back (inflated as fast, if so) */
  if (run->in.filtered && rates.read_rate > 0)
    t->compute +=
        bytes / rates.read_rate * (1 / in_threads + (out->filtered && read_back) / out_threads);
  if (rates.filter_rate > 0) t->compute += bytes / rates.filter_rate / out_threads;
  return 0;
}

/* Dataset k's object in the JSON opened, its moves' array begun. */
static void json_dataset_begin(const transpose_run *run, int k, plan_totals *t,
                               const char *type_text, const char *stored) {
  tool_json_object_begin(t->json);
  tool_json_string(t->json, "dataset", run->in.dataset);
  tool_json_string(t->json, "output_dataset", output_name(run, k));
  tool_json_string(t->json, "input_shape", run->in_shape);
  tool_json_string(t->json, "output_shape", run->out_shape);
  tool_json_string(t->json, "type", type_text);
  tool_json_int(t->json, "bytes", (long long)matrix_bytes(&run->in));
  tool_json_string(t->json, "storage", stored);
  tool_json_array_begin(t->json, "moves");
}

/* Dataset k's line of text. */
static void say_dataset(const transpose_run *run, int k, const char *type_text, const char *moves,
                        const char *stored) {
  char renamed[600] = "", bytes_text[32]; /* renamed: where OUT names the output dataset */
  if (strcmp(run->in.dataset, output_name(run, k)) != 0)
    snprintf(renamed, sizeof renamed, "%s ", output_name(run, k));
  tool_format_bytes(matrix_bytes(&run->in), bytes_text, sizeof bytes_text);
  tool_report_result("  %s: %s -> %s%s, %s, %s: %d move(s): %s; stored %s", run->in.dataset,
                     run->in_shape, renamed, run->out_shape, type_text, bytes_text, run->moves,
                     moves, stored);
}

/* run->in's share of the space and of the bytes on storage. */
static void add_totals(const transpose_run *run, int compressed, plan_totals *t) {
  const uint64_t bytes = matrix_bytes(&run->in), in_stored = stored_bytes(run);
  const uint64_t out_bytes = compressed ? in_stored : bytes;
  const uint64_t files = (uint64_t)(run->moves - 1 < 2 ? run->moves - 1 : 2);
  t->output += out_bytes;
  t->output_guessed |= compressed;
  t->output_bound |= compressed && !run->in.filtered;
  if (files * bytes > t->scratch) t->scratch = files * bytes;
  /* read and write, and read back: the output and each scratch file (verified) */
  const int read_back = t->verify != TOOL_VERIFY_NONE;
  t->storage += in_stored + out_bytes * (1 + read_back) +
                (uint64_t)(run->moves - 1) * bytes * (2 + read_back) +
                (t->verify == TOOL_VERIFY_INPUT ? in_stored : 0);
}

/* Collective.  A Zarr array as the output `out` planned: its chunks (or
 * shards) as output_zarr.c makes them, every one written whole. */
static int plan_zarr_array(const transpose_run *run, const xio_storage *storage,
                           const xio_shape *shape, xio_matrix *out, char *stored, size_t size,
                           xio_error *err) {
  char in_names[XIO_MAX_DIMS][128], names[XIO_MAX_DIMS][128];
  struct xio_zarr_matrix planned;
  if (xio_axis_names(&run->in, in_names, err)) return -1;
  for (int i = 0; i < shape->ndims; i++) snprintf(names[i], 128, "%s", in_names[run->order[i]]);
  if (tool_zarr_array_of(run, storage, shape, run->in.dataset, names, &planned.array, err))
    return -1;
  for (int i = 0; i < shape->ndims; i++) out->chunk_dims[i] = planned.array.chunks[i];
  out->chunked = out->filtered = out->codec = 1;
  xio_matrix zarr_out = {.zarr = &planned};
  xio_describe_zarr(&zarr_out, stored, size);
  return xio_matrix_fold(out, out->shape.lead, out->shape.split, out->shape.trail, err);
}

/* Collective.  Dataset k planned: its shapes, moves and output storage. */
static int plan_dataset(transpose_run *run, const xio_transpose_options *topt, int k, int one_node,
                        plan_totals *t, xio_error *err) {
  if (tool_open_dataset(run, k, NULL, err) != TOOL_EXIT_OK) return -1;
  xio_matrix last, out, scratch;
  xio_storage storage;
  char stored[256], type_text[256], moves[2048] = "";
  if (tool_output_storage(run, topt, &last, &storage, err)) return -1;
  const xio_shape out_shape = xio_shape_transposed(&last.shape);
  if (xio_plan_dataset(&run->in, &storage, &out_shape, run->in.type, &last, &out, stored,
                       sizeof stored, err) ||
      (run->kind->store &&
       plan_zarr_array(run, &storage, &out_shape, &out, stored, sizeof stored, err)))
    return -1;
  xio_type_describe(run->in.type, type_text, sizeof type_text);
  if (t->json) json_dataset_begin(run, k, t, type_text, stored);
  for (int j = 0; j < run->moves; j++) {
    const xio_matrix *dst = &out;
    if (j + 1 < run->moves) { /* into a scratch file */
      if (plan_scratch(run, j, &scratch, err)) return -1;
      dst = &scratch;
    }
    if (plan_move(run, topt, j, one_node, dst, t, moves, sizeof moves, err)) return -1;
  }
  if (t->json) {
    tool_json_array_end(t->json);
    tool_json_object_end(t->json);
  } else {
    say_dataset(run, k, type_text, moves, stored);
  }
  if (add_compute(run, &storage, &out_shape, &out, t, err)) return -1;
  add_totals(run, out.filtered, t);
  return 0;
}

/* xio_measured_fn: a dataset copied as it is, listed. */
static void plan_copied(const char *path, uint64_t bytes, void *user) {
  plan_totals *t = user;
  char bytes_text[32];
  tool_format_bytes(bytes, bytes_text, sizeof bytes_text);
  t->copied++;
  if (!t->json) {
    tool_report_result("  %s: copied as it is, %s", path, bytes_text);
  } else if (t->listed < JSON_COPIED_MOST) {
    t->listed++;
    tool_json_object_begin(t->json);
    tool_json_string(t->json, "dataset", path);
    tool_json_int(t->json, "bytes", (long long)bytes);
    tool_json_object_end(t->json);
  }
}

/* Collective.  The rest of the input, unless --only: each dataset copied. */
static int plan_rest(transpose_run *run, plan_totals *t, uint64_t *rest, xio_error *err) {
  *rest = 0;
  if (run->opt->only) return 0;
  const xio_path_list rearranged = rearranged_list(run);
  if (t->json) tool_json_array_begin(t->json, "copied");
  const int rc = xio_rest_bytes(run->comm, run->in.file, H5I_INVALID_HID, run->in_path.file,
                                &rearranged, plan_copied, t, rest, err);
  if (t->json) tool_json_array_end(t->json);
  t->storage += *rest * (2 + (t->verify != TOOL_VERIFY_NONE) * 2); /* copied, and compared */
  return rc;
}

/* Rank 0.  The rate, in bytes per second, at which up to 64 MiB from the
 * middle of `path` read from storage now (its pages dropped first), into
 * *sample the bytes read; 0 where it cannot be read. */
static double read_rate(const char *path, uint64_t *sample) {
  *sample = 0;
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  const off_t size = lseek(fd, 0, SEEK_END);
  const size_t piece = (size_t)4 << 20, most = (size_t)64 << 20;
  const size_t want = size <= 0 ? 0 : (uint64_t)size < most ? (size_t)size : most;
  const off_t from = (off_t)(((uint64_t)size - want) / 2 / 4096 * 4096);
  char *buffer = malloc(piece);
  double seconds = 0;
  if (buffer && want > 0) {
    (void)posix_fadvise(fd, from, (off_t)want, POSIX_FADV_DONTNEED);
    const double start = MPI_Wtime();
    ssize_t got = 1;
    while (*sample < want && got > 0) {
      const size_t ask = want - *sample < piece ? want - *sample : piece;
      got = pread(fd, buffer, ask, from + (off_t)*sample);
      if (got > 0) *sample += (uint64_t)got;
    }
    seconds = MPI_Wtime() - start;
  }
  free(buffer);
  close(fd);
  return *sample > 0 && seconds > 0 ? (double)*sample / seconds : 0;
}

/* Rank 0.  What becomes of OUT, as the run would find it. */
static const char *output_state(const transpose_run *run) {
  const tool_output_file *out = &run->output;
  if (out->final_exists)
    return "exists: --resume checks it, and says so if it is this transpose already";
  if (out->partial_found && run->opt->resume)
    return "the partial output an earlier run kept is resumed";
  if (out->partial_found)
    return "the partial output an earlier run kept is removed: --force starts over";
  if (access(out->final_path, F_OK) == 0) return "exists: --force replaces it";
  return "new";
}

/* Rank 0.  The space and time lines, or their JSON members. */
static void say_totals(const transpose_run *run, const plan_totals *t, uint64_t rest) {
  /* as the run reserves it (make_output.c) */
  const uint64_t headers = (uint64_t)16 << 10, output = t->output + rest + rest / 100 + headers;
  const uint64_t room = tool_output_free_bytes(&run->output);
  const int enough = room == UINT64_MAX || room >= output + t->scratch;
  uint64_t sample = 0;
  const double rate = read_rate(run->in_path.file, &sample);
  /* each rank inflates and compresses its share */
  const double seconds = rate > 0 ? (double)t->storage / rate + t->compute / run->nranks : 0;
  if (t->json) {
    tool_json_int(t->json, "copied_datasets", t->copied);
    tool_json_int(t->json, "copied_bytes", (long long)rest);
    tool_json_int(t->json, "output_bytes", (long long)output);
    tool_json_bool(t->json, "output_bytes_estimated", t->output_guessed);
    tool_json_int(t->json, "scratch_bytes", (long long)t->scratch);
    tool_json_int(t->json, "free_bytes", room == UINT64_MAX ? -1 : (long long)room);
    tool_json_bool(t->json, "enough_space", enough);
    tool_json_int(t->json, "storage_bytes", (long long)t->storage);
    tool_json_number(t->json, "read_rate_bytes_per_second", rate);
    tool_json_number(t->json, "compression_seconds", t->compute / run->nranks);
    tool_json_number(t->json, "estimate_seconds", seconds);
    return;
  }
  char output_text[32], scratch_text[64] = "", room_text[32] = "?", storage_text[32],
                        sample_text[32];
  tool_format_bytes(output, output_text, sizeof output_text);
  if (t->scratch) {
    char bytes[32];
    tool_format_bytes(t->scratch, bytes, sizeof bytes);
    snprintf(scratch_text, sizeof scratch_text, ", scratch files of up to %s", bytes);
  }
  if (room != UINT64_MAX) tool_format_bytes(room, room_text, sizeof room_text);
  const char *guess = !t->output_guessed ? "" : t->output_bound ? "at most " : "about ";
  const char *why = !t->output_guessed ? ""
                    : t->output_bound  ? " (less once compressed)"
                                       : " (compressed as well as its input)";
  tool_report_result("space: the output %s%s%s%s; %s free there%s", guess, output_text, why,
                     scratch_text, room_text,
                     enough ? "" : ": NOT ENOUGH, the run would stop at its start");
  tool_format_bytes(t->storage, storage_text, sizeof storage_text);
  tool_format_bytes(sample, sample_text, sizeof sample_text);
  char compute[128] = "";
  if (t->compute > 0)
    snprintf(compute, sizeof compute,
             ", and %.1f s of inflating and compressing on each rank, at the rate a sample went",
             t->compute / run->nranks);
  char total[32] = "under a second";
  if (seconds >= 0.5) snprintf(total, sizeof total, "about %.0f s", seconds);
  if (rate > 0)
    tool_report_result(
        "time: %s: the storage reading and writing %s at %.0f MB/s (the "
        "rate %s of %s read at just now)%s; the transposes and MPI's start not counted",
        total, storage_text, rate / 1e6, sample_text, run->input_shown, compute);
}

/* Rank 0.  The inputs joined and the records of each: every one with
 * --verbose, else the first and last few. */
static void say_inputs(const transpose_run *run, tool_json *json) {
  int64_t total = 0;
  for (int i = 0; i < run->input_count; i++) total += run->records[i];
  if (json) {
    tool_json_int(json, "inputs_joined", run->input_count);
    tool_json_int(json, "records_joined", (long long)total);
    return;
  }
  enum { ENDS = 4 };
  const int all = run->opt->verbose || run->input_count <= 2 * ENDS;
  char list[4096] = "";
  size_t used = 0;
  for (int i = 0; i < run->input_count && used < sizeof list; i++) {
    if (!all && i == ENDS) {
      used += (size_t)snprintf(list + used, sizeof list - used, ", ... (%d more)",
                               run->input_count - 2 * ENDS);
      i = run->input_count - ENDS;
    }
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s (%lld)", i ? ", " : "",
                             run->input_files[i], (long long)run->records[i]);
  }
  tool_report_result("inputs: %d joined, %lld records: %s%s", run->input_count, (long long)total,
                     list, used >= sizeof list ? "..." : "");
}

int tool_dry_run(transpose_run *run, const xio_transpose_options *topt, xio_error *err) {
  tool_json json;
  plan_totals t = {.json = run->opt->json ? &json : NULL, .verify = run->opt->verify};
  const int one_node = on_one_node(run->comm, run->nranks, err);
  if (one_node < 0) return -1;
  char budget[32];
  tool_format_bytes(run->budget, budget, sizeof budget);
  const char *backend = run->backend == XPOSE_BACKEND_CUDA ? "cuda" : "host";
  if (t.json) {
    tool_json_begin(t.json);
    tool_json_string(t.json, "status", "plan");
    tool_json_string(t.json, "input", run->in_path.file);
    tool_json_string(t.json, "output", run->out_path.file);
    tool_json_string(t.json, "output_state", run->rank == 0 ? output_state(run) : "");
    tool_json_int(t.json, "ranks", run->nranks);
    tool_json_string(t.json, "backend", backend);
    tool_json_int(t.json, "memory_budget_bytes", (long long)run->budget);
    tool_json_int(t.json, "threads", run->threads);
    tool_json_string(t.json, "threads_why", run->threads_why);
    tool_json_array_begin(t.json, "rearranged");
  } else {
    tool_report_result(
        "plan: %s -> %s (%s) on %d rank(s), %s backend, memory budget %s "
        "per rank; nothing is written",
        run->input_shown, run->out_path.file, run->rank == 0 ? output_state(run) : "", run->nranks,
        backend, budget);
    tool_report_result("threads: %s", run->threads_why);
  }
  if (run->joined) say_inputs(run, t.json);
  for (int k = 0; k < run->rearranged.count; k++)
    if (plan_dataset(run, topt, k, one_node, &t, err)) return -1;
  if (t.json) tool_json_array_end(t.json);
  uint64_t rest = 0;
  if (plan_rest(run, &t, &rest, err)) return -1;
  if (run->rank == 0) say_totals(run, &t, rest);
  if (t.json) tool_json_print(t.json);
  return 0;
}
