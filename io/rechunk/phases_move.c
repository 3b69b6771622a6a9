/* What both phases share (phases_move.h): a failed item, a round done. */
#include "phases_move.h"

#include <mpi.h>

int xio_phases_item_failed(xio_phases_move *ph, const xio_error *why) {
  int none = 0;
  if (atomic_compare_exchange_strong(&ph->failed, &none, 1)) ph->item_err = *why;
  return -1;
}

/* Collective.  Whether any rank was asked to stop. */
static int stop_agreed(xio_phases_move *ph) {
  int mine = ph->options->stop_requested && ph->options->stop_requested(), any = 0;
  return MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, ph->comm) == MPI_SUCCESS && any;
}

int xio_phases_round_done(xio_phases_move *ph) {
  const xio_transpose_options *o = ph->options;
  const uint64_t total = (uint64_t)ph->in->rows * (uint64_t)ph->in->cols * ph->in->elem_size;
  ph->rounds_done++;
  if (o->progress)
    o->progress(ph->rounds_done, ph->rounds,
                (uint64_t)((double)total * (double)ph->rounds_done / (double)ph->rounds), total,
                o->progress_user_data);
  return stop_agreed(ph) ? XIO_STOPPED : 0;
}
