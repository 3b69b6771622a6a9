/* Whether an output is the transpose of its input, read back from
 * storage: after the passes, before publishing; a rerun's output
 * published already; and the `xpose verify IN OUT` command. */
#ifndef TOOL_VERIFICATION_H
#define TOOL_VERIFICATION_H

#include "run.h"

/* Collective.  Reads the closed output back from storage and compares it
 * with what was written (and with --verify, with the input re-read).
 * 0 when it matches, XIO_STOPPED when stopped by a signal, -1 on error,
 * or TOOL_EXIT_VERIFY when it does not match. */
int tool_verify_output(transpose_run *run, double *seconds, xio_error *err);

/* Collective.  --resume where OUT exists and no partial does: a run that
 * published already, when OUT is the transpose of IN, read as `xpose
 * verify` reads them (a store's arrays as topt would shape them).
 * TOOL_EXIT_OK, having said so, or TOOL_EXIT_ERROR with the refusal in
 * err. */
int tool_check_already_done(transpose_run *run, const xio_transpose_options *topt,
                            const char *type_text, xio_error *err);

/* `xpose verify IN OUT`: whether OUT is the transpose of IN, reading both. */
int tool_run_check(const tool_options *opt, MPI_Comm comm);

#endif
