/* `xpose --plan IN OUT` (--dry-run): what the run would do, said before a
 * run of hours starts, and nothing written: each dataset rearranged (its
 * shapes, moves, passes and output storage, as the run plans them) and
 * each copied, the space the output and the scratch files need against
 * the space free, and the time the storage would take at the rate a
 * sample of the input reads at now. */
#ifndef TOOL_DRY_RUN_H
#define TOOL_DRY_RUN_H

#include "h5_transpose.h"
#include "run.h"

/* Collective, the run opened (its output's name taken, as a run takes it,
 * so that what the run would refuse is refused).  Prints the plan, or
 * with --json one object.  0, or -1 with a message. */
int tool_dry_run(transpose_run *run, const xio_transpose_options *topt, xio_error *err);

#endif
