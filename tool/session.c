#include "session.h"

#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

#include "h5_error.h"
#include "options.h"

int tool_session_start(const char *program, int *argc, char ***argv, int *rank) {
  xio_error err = {""};
  *rank = 0;
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    fprintf(stderr, "%s: error: MPI_Init failed\n", program);
    return TOOL_EXIT_ERROR;
  }
  if (XIO_MPI(MPI_Comm_rank(MPI_COMM_WORLD, rank), &err) ||
      (H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0 &&
       xio_fail(&err, "cannot take over HDF5's error reporting"))) {
    fprintf(stderr, "%s: error: %s\n", program, err.message);
    (void)MPI_Finalize(); /* failing already */
    return TOOL_EXIT_ERROR;
  }
  return TOOL_EXIT_OK;
}

int tool_session_end(const char *program, int rank, int exit_code) {
  if (MPI_Finalize() != MPI_SUCCESS && exit_code == TOOL_EXIT_OK) {
    fprintf(stderr, "%s: error: MPI_Finalize failed on rank %d\n", program, rank);
    exit_code = TOOL_EXIT_ERROR;
  }
  return exit_code;
}
