/* verify_check IN.h5 /dataset OUT.h5 /dataset: runs xio_verify_transpose on
 * two existing files and exits 0 (transpose), 3 (not) or 1 (error); lets
 * the tests feed --verify's checksum outputs that are known to be wrong. */
#include <hdf5.h>
#include <stdio.h>

#include "h5_matrix.h"
#include "h5_verify.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int rank, code = 1, match = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  xio_error err = {""};
  xio_matrix in, out;
  xio_matrix_reset(&in);
  xio_matrix_reset(&out);
  char detail[256] = "";
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: verify_check IN.h5 /dataset OUT.h5 /dataset\n");
  } else if (xio_open_existing(MPI_COMM_WORLD, argv[1], argv[1], argv[2], 0, &in, &err) == 0 &&
             xio_open_existing(MPI_COMM_WORLD, argv[3], argv[3], argv[4], 0, &out, &err) == 0 &&
             xio_verify_transpose(&in, &out, 4096, &match, detail, sizeof detail, &err) == 0) {
    code = match ? 0 : 3;
    if (rank == 0) printf("%s: %s\n", match ? "transpose" : "not the transpose", detail);
  } else if (rank == 0) {
    fprintf(stderr, "verify_check: %s\n", err.message);
  }
  xio_close(&in, &err);
  xio_close(&out, &err);
  MPI_Finalize();
  return code;
}
