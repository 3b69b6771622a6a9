/* Keeping people's files safe: checks before anything is opened, and an
 * output that appears under its name only when complete.
 *
 * The output is written to "<OUT>.xpose-<pid>.partial" beside OUT, synced,
 * and renamed over OUT at the very end (rename is atomic).  A run that fails
 * removes the partial file; a run killed by SIGINT, SIGTERM or SIGHUP
 * removes it too; only SIGKILL can leave one, and its name says what it is. */
#ifndef TOOL_FILE_SAFETY_H
#define TOOL_FILE_SAFETY_H

#include <mpi.h>

#include "h5_error.h"

typedef struct {
  char final_path[4096];
  char temp_path[4200];
} tool_output_file;

/* Collective.  Rank 0 checks that `path` is a readable HDF5 file. */
int tool_check_input(MPI_Comm comm, const char *path, xio_error *err);

/* Collective.  Rank 0 checks that `path` may be written: its directory
 * exists and is writable; an existing file is replaced only with `force`,
 * and never when it is `input` (NULL: no input), by any name or link.
 * Then every rank learns the temporary name, and signals remove it. */
int tool_output_prepare(MPI_Comm comm, const char *path, const char *input, int force,
                        tool_output_file *out, xio_error *err);

/* Collective.  Syncs the temporary file and renames it to the final name. */
int tool_output_publish(MPI_Comm comm, tool_output_file *out, xio_error *err);

/* Collective.  Removes the temporary file, if any. */
void tool_output_discard(MPI_Comm comm, tool_output_file *out);

#endif
