/* A Zarr store as the output (output_kind.h): its group and arrays made,
 * the rest of the input copied by rank 0, each rearranged dataset's array
 * written by every rank through the passes (matrix_zarr.h), v2's
 * metadata consolidated at the end, and the copies read back. */
#include "output_zarr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_spec.h"
#include "make_output.h"
#include "matrix_zarr.h"
#include "moves.h"
#include "report.h"
#include "size.h"
#include "zarr_attributes.h"
#include "zarr_consolidate.h"
#include "zarr_meta.h"
#include "zarr_rest.h"

/* The most bytes of a default shard (zarr_array.h): a sixteenth of the
 * budget, so that a pass holds many (a pass holds whole shards), rounded
 * down to a power of two, so that a rerun's budget, which moves with the
 * node's free memory, gives the same shards; 256 MiB at most, a file
 * that any client reads whole. */
static uint64_t default_shard_bytes(uint64_t budget) {
  uint64_t most = (uint64_t)256 << 20;
  while (most > budget / 16 && most > 1) most /= 2;
  return most;
}

int tool_zarr_array_of(const transpose_run *run, const xio_storage *storage, const xio_shape *shape,
                       const char *path, char names[][128], xio_zarr_array *a, xio_error *err) {
  int64_t chunks[XIO_MAX_DIMS], shards[XIO_MAX_DIMS];
  unsigned char fill[16];
  char why[256];
  const char *moved[XIO_MAX_DIMS];
  const int has_fill =
      run->in.type_size <= sizeof fill && xio_zarr_fill_value(run->in.dset, run->in.type, fill);
  if (xio_zarr_chunks_like(&run->in, storage, shape, run->in.type_size, run->in.dataset, chunks,
                           err))
    return -1;
  int rc = xio_zarr_array_init(a, path, &run->opt->zarr_codec, run->in.type, shape, chunks,
                               has_fill ? fill : NULL, why, sizeof why);
  for (int i = 0; i < shape->ndims; i++) moved[i] = names[i];
  if (rc == 0 && run->opt->shards && !run->opt->unsharded) {
    tool_chunk_spec_apply(run->opt->shards, shape->ndims, moved, shape->dims, shards);
    rc = xio_zarr_array_shard(a, shards, why, sizeof why);
  } else if (rc == 0 && !run->opt->shards &&
             xio_zarr_default_shards(a, default_shard_bytes(run->budget), shards)) {
    rc = xio_zarr_array_shard(a, shards, why, sizeof why);
  }
  return rc ? xio_fail(err, "%s:%s cannot be stored in %s: %s", run->input_shown, run->in.dataset,
                       run->out_path.file, why)
            : 0;
}

/* Collective (every rank reads the same metadata: parallel HDF5's reads
 * are collective).  Dataset k's array (run->in holds it) described into
 * run->zarr_arrays[k], its path relative to the store; its axes' names
 * and attributes for its metadata. */
static int describe_array(transpose_run *run, const xio_transpose_options *topt, int k,
                          xio_phony_dims *phony, char names[][128], char **attributes,
                          xio_error *err) {
  const char *name = output_name(run, k);
  xio_matrix last;
  xio_storage storage;
  char in_names[XIO_MAX_DIMS][128], path[600];
  if (tool_output_storage(run, topt, &last, &storage, err) ||
      xio_zarr_axis_names(run->in.dset, run->in.shape.ndims, run->in.shape.dims, phony->lengths,
                          &phony->count, in_names, err) ||
      xio_zarr_attributes(run->in.dset, run->opt->zarr_codec.format, NULL, run->in.dataset,
                          attributes, err))
    return -1;
  const xio_shape shape = xio_shape_transposed(&last.shape);
  for (int i = 0; i < shape.ndims; i++) snprintf(names[i], 128, "%s", in_names[run->order[i]]);
  snprintf(path, sizeof path, "%s%s", name[0] == '/' ? "" : "/", name);
  return tool_zarr_array_of(run, &storage, &shape, path, names, &run->zarr_arrays[k], err);
}

/* Collective.  Each rearranged dataset's array described on every rank,
 * and with `create` its metadata written by rank 0. */
static int describe_arrays(transpose_run *run, const xio_transpose_options *topt,
                           xio_phony_dims *phony, int create, xio_error *err) {
  free(run->zarr_arrays);
  run->zarr_arrays = calloc((size_t)run->rearranged.count, sizeof *run->zarr_arrays);
  if (xio_agree(run->comm, run->zarr_arrays ? 0 : xio_fail(err, "out of memory"), err)) return -1;
  for (int k = 0; k < run->rearranged.count; k++) {
    char names[XIO_MAX_DIMS][128], *attributes = NULL;
    if (tool_open_dataset(run, k, NULL, err) != TOOL_EXIT_OK) return -1;
    int rc = describe_array(run, topt, k, phony, names, &attributes, err);
    if (xio_agree(run->comm, rc, err)) return free(attributes), -1;
    if (!create) {
      free(attributes);
      continue;
    }
    xio_zarr_array a = run->zarr_arrays[k];
    snprintf(a.path, sizeof a.path, "%.3400s%.600s", run->output.partial_path,
             run->zarr_arrays[k].path);
    rc = run->rank == 0 ? xio_zarr_array_create(&a, names, attributes, err) : 0;
    free(attributes);
    if (xio_agree(run->comm, rc, err)) return -1;
  }
  return 0;
}

/* Rank 0: the rest of the input, read from the input opened on this rank
 * alone (parallel HDF5's metadata reads are every rank's). */
static int copy_rest_on_root(transpose_run *run, const char *store, xio_phony_dims *phony,
                             int comparing, char *differs, size_t size, uint64_t *compared,
                             xio_error *err) {
  const hid_t from = H5Fopen(hdf5_input(run), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (from < 0) return xio_fail_h5(err, "%s: cannot open it on one rank", hdf5_input(run));
  const xio_path_list rearranged = rearranged_list(run);
  xio_zarr_rest_stats stats;
  xio_zarr_codec codec = run->opt->zarr_codec;
  if (run->store_format) codec.format = run->store_format;
  const int rc = comparing
                     ? xio_zarr_compare_rest(from, run->input_shown, store, &codec, &rearranged,
                                             piece_budget(run), differs, size, compared, err)
                     : xio_zarr_copy_rest(from, run->input_shown, store, &codec, &rearranged,
                                          piece_budget(run), phony, &stats, err);
  (void)H5Fclose(from); /* only read */
  if (rc == 0 && !comparing) {
    char bytes[32];
    tool_format_bytes(stats.bytes, bytes, sizeof bytes);
    tool_report_verbose("copied the rest of %s: %d array(s) (%s of data), %d group(s)",
                        run->input_shown, stats.arrays, bytes, stats.groups);
  }
  return rc;
}

/* Collective: the store's root group, with the input file's attributes
 * and this run's history line. */
static int make_root(transpose_run *run, xio_error *err) {
  char line[sizeof run->opt->command_line + 64] = "", *attributes = NULL;
  if (run->rank == 0) tool_history_line(run, line, sizeof line);
  const hid_t root = H5Gopen2(run->in.file, "/", H5P_DEFAULT);
  int rc = XIO_MPICHECK(MPI_Bcast(line, (int)sizeof line, MPI_CHAR, 0, run->comm), err) ||
                   root < 0 ||
                   xio_zarr_attributes(root, run->opt->zarr_codec.format, line[0] ? line : NULL,
                                       run->input_shown, &attributes, err)
               ? -1
               : 0;
  if (root >= 0) (void)H5Gclose(root); /* only read */
  if (xio_agree(run->comm, rc, err)) return free(attributes), -1;
  rc = run->rank == 0 ? xio_zarr_group_create(run->output.partial_path, run->opt->zarr_codec.format,
                                              attributes, err)
                      : 0;
  free(attributes);
  return xio_agree(run->comm, rc, err);
}

/* Collective (tool_output_kind's ready): the arrays described, for a
 * partial to be made or resumed. */
static int ready_zarr(transpose_run *run, const xio_transpose_options *topt, xio_error *err) {
  xio_phony_dims phony = {0};
  return describe_arrays(run, topt, &phony, 0, err);
}

static int make_zarr(transpose_run *run, const xio_transpose_options *topt, xio_error *err) {
  xio_phony_dims phony = {0};
  if (make_root(run, err) || describe_arrays(run, topt, &phony, 1, err)) return -1;
  const int rc =
      run->rank == 0 && !run->opt->only
          ? copy_rest_on_root(run, run->output.partial_path, &phony, 0, NULL, 0, NULL, err)
          : 0;
  return xio_agree(run->comm, rc, err);
}

static int64_t inner_chunk(const xio_zarr_array *a, int axis) {
  return a->sharded ? a->shards.inner[axis] : a->chunks[axis];
}

/* Whether the store's array `stored` is what this run would write as
 * `asked` (its data type and byte order, as its metadata is read back:
 * values read back by their bytes alone would not show a wrong one; its
 * codecs; its chunks where --chunks names them, its shards where
 * --shards does): a rerun with other options must not find the store
 * done. */
static int as_asked(const transpose_run *run, const xio_zarr_array *asked,
                    const xio_zarr_array *stored, xio_error *err) {
  const xio_filters *a = &asked->codecs, *b = &stored->codecs;
  int same = a->count == b->count && asked->format == stored->format;
  for (int i = 0; same && i < a->count; i++)
    same = a->id[i] == b->id[i] && a->value[i] == b->value[i];
  if (!same)
    return xio_fail(err, "%s is stored with other codecs than this command asks for", stored->path);
  if (asked->kind != stored->kind || asked->type_size != stored->type_size ||
      asked->big_endian != stored->big_endian) /* its metadata read back: another reading */
    return xio_fail(err, "%s's metadata says another data type or byte order than was written",
                    stored->path);
  for (int i = 0; run->opt->chunks && i < asked->ndims; i++)
    if (inner_chunk(asked, i) != inner_chunk(stored, i))
      return xio_fail(err, "%s is stored in other chunks than --chunks asks for", stored->path);
  for (int i = 0; run->opt->shards && i < asked->ndims; i++)
    if (asked->sharded != stored->sharded || asked->chunks[i] != stored->chunks[i])
      return xio_fail(err, "%s is stored in other shards than --shards asks for", stored->path);
  return 0;
}

/* Local.  Array k of the store at `path` as a run writes it (described
 * from the command), or as the store's metadata says it is, to be read
 * back (the run's partial, a store published already, `xpose verify`'s):
 * its chunks whatever budget wrote them. */
static int array_of(const transpose_run *run, int k, const char *path, int writable,
                    xio_zarr_array *a, xio_error *err) {
  if (writable) {
    *a = run->zarr_arrays[k];
    snprintf(a->path, sizeof a->path, "%.3400s%.600s", path, run->zarr_arrays[k].path);
    return 0;
  }
  char at[4700];
  xio_zarr_array_path(path, output_name(run, k), at, sizeof at);
  int rc = xio_zarr_array_read(at, at, a, NULL, NULL, NULL, err);
  if (rc == 0 && run->zarr_arrays) rc = as_asked(run, &run->zarr_arrays[k], a, err);
  return rc;
}

static int open_zarr(transpose_run *run, int k, const char *path, const char *shown, int writable,
                     xio_error *err) {
  (void)shown; /* its chunk files: written by the codec, read by the reader */
  xio_error ignored;
  if (run->out.comm != MPI_COMM_NULL) (void)xio_close(&run->out, &ignored); /* nothing to flush */
  xio_zarr_array a;
  const int rc = array_of(run, k, path, writable, &a, err) ||
                         xio_open_zarr(run->comm, &a, output_name(run, k), 0, &run->out, err)
                     ? -1
                     : 0;
  return xio_agree(run->comm, rc, err);
}

static int finish_zarr(transpose_run *run, xio_error *err) {
  const int rc = run->rank == 0 && run->opt->zarr_codec.format == 2
                     ? xio_zarr_consolidate(run->output.partial_path, err)
                     : 0;
  xio_error ignored;
  (void)xio_close(&run->out, &ignored); /* written by the chunk writer: nothing to flush */
  return xio_agree(run->comm, rc, err);
}

static int compare_zarr_rest(transpose_run *run, const char *path, char *differs, size_t size,
                             uint64_t *compared, xio_error *err) {
  differs[0] = '\0';
  *compared = 0;
  const int rc =
      run->rank == 0 ? copy_rest_on_root(run, path, NULL, 1, differs, size, compared, err) : 0;
  if (xio_agree(run->comm, rc, err) ||
      XIO_MPICHECK(MPI_Bcast(differs, (int)size, MPI_CHAR, 0, run->comm), err) ||
      XIO_MPICHECK(MPI_Bcast(compared, 1, MPI_UINT64_T, 0, run->comm), err))
    return -1;
  return 0;
}

const tool_output_kind tool_zarr_output = {.name = "Zarr store",
                                           .store = 1,
                                           .ready = ready_zarr,
                                           .make = make_zarr,
                                           .open = open_zarr,
                                           .finish = finish_zarr,
                                           .compare_rest = compare_zarr_rest};
