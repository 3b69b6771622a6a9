/* Keeping people's files safe on the way out: an output appears under its
 * name only when complete, and never replaces a file it was not asked to.
 *
 * The output is written as "<OUT>.xpose-partial" beside OUT (a name fixed by
 * OUT's, so a later run can resume it), with its resume record in
 * "<OUT>.xpose-resume" (resume_record.h), while rank 0 holds an flock on
 * "<OUT>.xpose-lock" (a second run to the same output fails at once with a
 * message; a killed run's lock dies with it), and an order of several
 * moves writes "<OUT>.xpose-scratch-J" (main.c), and a netCDF-3 input is
 * read through "<OUT>.xpose-netcdf4", its netCDF-4 view (input_view.h).  Very long names are cut
 * and given a hash, so all of them stay within NAME_MAX.  Space for the
 * whole output is reserved before the first pass.  Publishing syncs the
 * file and renames it to OUT, atomically, and without --force never over
 * a file that appeared meanwhile (renameat2 RENAME_NOREPLACE, else link +
 * unlink).  A store (a directory of files, store_files.h) is made, synced,
 * published and removed the same way, as one output; an existing store
 * under OUT's name is never replaced. */
#ifndef TOOL_OUTPUT_FILE_H
#define TOOL_OUTPUT_FILE_H

#include <mpi.h>
#include <stdint.h>
#include <sys/types.h>

#include "h5_error.h"

/* The scratch files of an order of three moves at most: the first two
 * moves write one each. */
enum { TOOL_SCRATCH_FILES = 2 };

typedef struct {
  char final_path[4096];
  char partial_path[4200], record_path[4200], lock_path[4200];
  char scratch_paths[TOOL_SCRATCH_FILES][4200];
  char view_path[4200];
  char store_views[4200]; /* a folder: the netCDF-4 view of each Zarr store joined */
  int force;
  int store;            /* a directory store (Zarr): its partial is a directory */
  int partial_found;    /* an earlier run's partial, kept for resuming */
  int final_exists;     /* with --resume, no --force and no partial: OUT itself */
  int owned;            /* this run holds the lock and may remove the partial */
  int usage_error;      /* the refusal is the command line's fault (exit 2) */
  char lock_note[4400]; /* why no lock could be taken, if so */
} tool_output_file;

/* "a FIFO", "a character device", ...: what a non-regular file is. */
const char *tool_file_kind(mode_t mode);

/* What to do with a partial output an earlier run left. */
typedef enum {
  TOOL_PARTIAL_REFUSE,  /* fail, saying to use --resume or --force */
  TOOL_PARTIAL_KEEP,    /* keep it for resuming (partial_found) */
  TOOL_PARTIAL_REPLACE, /* remove it: start over */
} tool_partial_policy;

/* Collective.  Rank 0 checks that `path` may be written: its directory
 * exists and is writable; an existing regular file (or a symbolic link,
 * dangling or not) is replaced only with `force`, and never when it is
 * one of the `input_count` inputs, by any name or link; other kinds of
 * file never.
 * An input that is the output's partial, record, lock, scratch or view file is
 * refused (usage_error) before any is touched, as is a partial's name
 * MPI-IO cannot open (mpi_io_name.h).  It takes the lock, then deals
 * with any partial left by an earlier run as `partial` says (a record
 * with no partial beside it is removed).  With
 * TOOL_PARTIAL_KEEP and no `force`, an existing output with no partial
 * beside it is not refused but flagged (final_exists): a resumed run that
 * finished already. */
int tool_output_prepare(MPI_Comm comm, const char *path, const char *const *inputs, int input_count,
                        int force, tool_partial_policy partial, int store, tool_output_file *out,
                        xio_error *err);

/* Collective.  Reserves `bytes` for the partial file on its file system
 * (fallocate), so a full disk or quota fails now, naming what is needed
 * and what is free. */
int tool_output_reserve(MPI_Comm comm, const tool_output_file *out, uint64_t bytes, xio_error *err);

/* Collective.  Fails, naming `what` ("its scratch files"), what is needed
 * and what is free, where the partial's file system has less than `bytes`
 * free beside it: for files written later, not reserved. */
int tool_output_check_room(MPI_Comm comm, const tool_output_file *out, uint64_t bytes,
                           const char *what, xio_error *err);

/* Local.  Bytes free on the file system of OUT's directory (UINT64_MAX:
 * unknown), before or after the partial is made. */
uint64_t tool_output_free_bytes(const tool_output_file *out);

/* Collective, the file closed.  Syncs the partial to storage and drops it
 * from every node's page cache, so that reading it back reads storage. */
int tool_output_evict(MPI_Comm comm, const tool_output_file *out, xio_error *err);

/* Local.  Drops path's clean pages from this node's page cache: 0, or
 * why not (an errno value). */
int tool_drop_cached_pages(const char *path);

/* Local.  After a failure: when the partial's file system has less than
 * `next_bytes` (what the next pass would write) or 1 MiB free, err becomes
 * a full-disk message with the space written and, where passes_done > 0,
 * the space the whole output needs by the passes written (a compressed
 * output, whose space could not be reserved ahead); else unchanged. */
void tool_output_explain_full(const tool_output_file *out, uint64_t next_bytes, int64_t passes_done,
                              int64_t passes, xio_error *err);

/* Collective.  Syncs the partial and renames it to the final name, removes
 * its record, then releases the lock.  On failure the partial is kept and
 * named in err. */
int tool_output_publish(MPI_Comm comm, tool_output_file *out, xio_error *err);

/* Collective.  Releases the lock; removes the partial and its record
 * unless `keep`. */
void tool_output_release(MPI_Comm comm, tool_output_file *out, int keep);

/* Local.  fsyncs the directory holding `path`, so that a name made in it
 * (a new file, a rename) survives a crash. */
int tool_sync_parent(const char *path, xio_error *err);

/* Local.  Removes the partial and its record (a missing one is fine). */
int tool_output_remove_partial(const tool_output_file *out, xio_error *err);

#endif
