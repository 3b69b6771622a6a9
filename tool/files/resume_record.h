/* The record that makes a partial output resumable.
 *
 * It is a small text file beside the partial, "<OUT>.xpose-resume"
 * (output_file.h names it): what the partial is the transpose of (the
 * input's path and identity: device, inode, size, modification and
 * status-change times; its dataset and datatype), the pass grid, and how
 * many passes are on storage with their checksums.  It is not inside the
 * partial: an HDF5 user block would stay in the published file, whose
 * first bytes must be HDF5's signature for xarray, CDO and `file` to know
 * it.  Two 4 KiB slots are written in turn, each with a sequence number
 * and a check of its own, so a write torn by a crash leaves the previous
 * record readable.  `cat OUT.h5.xpose-resume` shows it. */
#ifndef TOOL_RESUME_RECORD_H
#define TOOL_RESUME_RECORD_H

#include <stdint.h>

#include "h5_matrix.h"
#include "h5_transpose.h"

/* Which file an input is, and whether it changed: ctime cannot be set
 * back by touch, cp -p or rsync -a, so a rewrite shows even when the size
 * and mtime are restored.  Device numbers of network file systems differ
 * from client to client, so `host` says where `device` was seen. */
typedef struct {
  uint64_t device, inode, size;
  int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
  char host[256];
} tool_input_identity;

typedef struct {
  /* what the partial is the transpose of */
  char input_path[1024]; /* absolute; for messages */
  uint64_t input_path_hash, type_hash;
  tool_input_identity input;
  /* Inputs joined: a hash of the others' paths and identities, in order
   * (tool_joined_inputs_hash); 0 for one input. */
  uint64_t joined_hash;
  char input_dataset[512], output_dataset[512];
  int64_t rows, cols;
  xio_shape shape; /* the input's axes and their fold: which permutation */
  /* Several datasets rearranged in one run (--dims): how many, hashes of
   * their paths and of the order asked for (the latter compared only at
   * another dataset than the wanted one: a dataset's own fold is compared
   * above), which one the fields above and `progress` are of; those before
   * it are done, with the checksums `finished` (tool_checksums_chain).
   * One dataset: 1, the hashes, 0, zeros.  (The record's line for them
   * is still called "variables", so that records written before read.) */
  int dataset_count, dataset_index;
  uint64_t list_hash, order_hash;
  /* --only: the rearranged datasets alone, not the rest of the input; -1
   * in a record that does not say (an xpose before it did). */
  int only;
  xio_checksums finished;
  /* An order of several moves (main.c): which one `progress` and the
   * fields above are of (its source's shape and fold), the checksum of
   * what its first move read, and that of the scratch file it reads, as
   * the move before wrote it. */
  int move;
  uint64_t first_read, source_sum;
  /* The partial is being made (the rest of the input copied into it): no
   * pass is done, and `progress` says nothing. */
  int copying;
  /* how far it got */
  xio_progress progress;
  uint64_t sequence;
} tool_resume_record;

/* Local.  The identity of `in` (opened from input_file) transposed into
 * output_dataset; progress zeroed.  -1 with a message in err. */
int tool_resume_identity(const char *input_file, const xio_matrix *in, const char *output_dataset,
                         tool_resume_record *record, xio_error *err);

/* Local.  The fields of tool_resume_identity that describe the dataset,
 * for the next of several a run rearranges; the rest kept. */
int tool_resume_identity_dataset(const xio_matrix *in, const char *output_dataset,
                                 tool_resume_record *record, xio_error *err);

/* Sets the record's list of datasets: `count` paths, `order` what the
 * command line asked (--dims or --axes; "" for none). */
void tool_resume_record_set_list(tool_resume_record *record, const char (*paths)[512], int count,
                                 const char *order);

/* The checksums of datasets one after the other: `so_far`'s chained with
 * `next`'s.  Order matters, so two datasets' data swapped shows; one
 * dataset's chained onto zeros are its own. */
xio_checksums tool_checksums_chain(xio_checksums so_far, xio_checksums next);

/* Local.  The identity of the file at `path` now; -1 with a message. */
int tool_input_identity_of(const char *path, tool_input_identity *id, xio_error *err);

/* Local.  The hash of inputs joined after the first (their absolute paths,
 * inodes, sizes, modification and status-change times, in order): any
 * input changed, replaced, removed or moved changes it.  0 for none. */
int tool_joined_inputs_hash(const char *const *paths, int count, uint64_t *hash, xio_error *err);

/* What makes `now` another file, or the same one changed, than `then`
 * ("it was replaced by another file", "it was modified", ...), or NULL.
 * The device is compared only when both were seen from the same host. */
const char *tool_input_identity_change(const tool_input_identity *then,
                                       const tool_input_identity *now);

/* Local.  Reads the newest intact record in the file at `path`: 0, or -1
 * when there is none (no file, or both slots damaged). */
int tool_resume_record_read(const char *path, tool_resume_record *record);

/* Local.  Writes the record (sequence + 1) into the slot not holding the
 * newest one, creating the file if need be, and syncs it to storage. */
int tool_resume_record_write(const char *path, tool_resume_record *record, xio_error *err);

/* What makes `found` belong to another run than `wanted` ("the input file
 * was modified since it was started", ...), or NULL when it is the same
 * transpose.  An older xpose's record says so (tool_resume_record_read
 * reads it as version 0). */
const char *tool_resume_record_mismatch(const tool_resume_record *found,
                                        const tool_resume_record *wanted);

#endif
