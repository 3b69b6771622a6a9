/* The registry of exchange engines and the choice among them.  Every rank
 * asks every engine whether it can run here; one reduction then tells all
 * ranks which engines all of them can run, so they all pick the same. */
#include <stdio.h>

#include "check.h"
#include "exchange/exchange.h"

/* In the order XPOSE_EXCHANGE_AUTO prefers them. */
static const xpose_exchange_engine *const registry[] = {
#ifdef XPOSE_HAVE_CUDA
    &xpose_exchange_p2p,
#endif
#ifdef XPOSE_HAVE_NCCL
    &xpose_exchange_nccl,
#endif
    &xpose_exchange_mpi,
#ifdef XPOSE_HAVE_CUDA
    &xpose_exchange_staged,
#endif
};
enum { ENGINES = sizeof registry / sizeof *registry };

static const char *kind_name(xpose_exchange_kind kind) {
  switch (kind) {
    case XPOSE_EXCHANGE_MPI: return "mpi";
    case XPOSE_EXCHANGE_NCCL: return "nccl";
    case XPOSE_EXCHANGE_STAGED: return "staged";
    case XPOSE_EXCHANGE_P2P: return "p2p";
    default: return "auto";
  }
}

xpose_status xpose_exchange_choose(MPI_Comm comm, xpose_backend *backend,
                                   xpose_exchange_kind wanted, int own_output,
                                   const char *auto_avoids_peer_writes,
                                   const xpose_exchange_engine **engine) {
  xpose_status res = XPOSE_SUCCESS;
  char why[ENGINES][256];
  int mine = 0, common = 0;
  for (int i = 0; i < ENGINES; i++) {
    why[i][0] = '\0';
    if (registry[i]->writes_peer_outputs && !own_output) {
      if (wanted == registry[i]->kind)
        snprintf(why[i], sizeof why[i], "it needs plans that own their outputs (own_output)");
      continue; /* every rank skips it alike: own_output was agreed */
    }
    if (registry[i]->writes_peer_outputs && wanted == XPOSE_EXCHANGE_AUTO &&
        auto_avoids_peer_writes) {
      snprintf(why[i], sizeof why[i], "%s", auto_avoids_peer_writes);
      continue; /* agreed values only, as above */
    }
    if (registry[i]->available(backend, comm, why[i], sizeof why[i])) mine |= 1 << i;
  }
  XPOSE_MPICHECKGOTO(MPI_Allreduce(&mine, &common, 1, MPI_INT, MPI_BAND, comm), res, fail);
  *engine = NULL;
  int built = wanted == XPOSE_EXCHANGE_AUTO;
  for (int i = 0; i < ENGINES && !*engine; i++) {
    if (wanted != XPOSE_EXCHANGE_AUTO && registry[i]->kind != wanted) continue;
    built = 1;
    if (common & (1 << i))
      *engine = registry[i];
    else if (why[i][0])
      xpose_logf(wanted == XPOSE_EXCHANGE_AUTO ? XPOSE_LOG_INFO : XPOSE_LOG_ERROR, NULL, 0,
                 "exchange engine %s cannot run here: %s", registry[i]->name, why[i]);
  }
  XPOSE_REQUIREGOTO(built, XPOSE_ERROR_UNSUPPORTED, res, fail,
                    "exchange engine %s was not built into this xpose", kind_name(wanted));
  XPOSE_REQUIREGOTO(*engine, XPOSE_ERROR_UNSUPPORTED, res, fail,
                    "exchange engine %s is not available on every rank with the %s backend",
                    kind_name(wanted), backend->ops->name);
fail:
  return res;
}
