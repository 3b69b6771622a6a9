/* A user's MPI program: transposes a 37 x 23 matrix of doubles across the
 * ranks of MPI_COMM_WORLD with the installed libxpose and checks every
 * element, and that the library is the one the header describes. */
#include <stdio.h>
#include <stdlib.h>
#include <xpose.h>

static double element(int64_t i, int64_t j) { return (double)i * 1000.0 + (double)j + 0.5; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks, wrong = 0, all_wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (xpose_version() != XPOSE_VERSION) {
    fprintf(stderr, "library version %d, header version %d\n", xpose_version(), XPOSE_VERSION);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int64_t rows = 37, cols = 23;
  xpose_plan plan;
  xpose_status st = xpose_plan_create(MPI_COMM_WORLD, rows, cols, sizeof(double), NULL, &plan);
  if (st != XPOSE_SUCCESS) {
    fprintf(stderr, "xpose_plan_create: %s\n", xpose_status_string(st));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int64_t in_first, in_count, out_first, out_count;
  xpose_plan_input_rows(plan, &in_first, &in_count);
  xpose_plan_output_rows(plan, &out_first, &out_count);
  double *in = malloc(sizeof(double) * (size_t)(in_count * cols + 1));
  double *out = malloc(sizeof(double) * (size_t)(out_count * rows + 1));
  for (int64_t i = 0; i < in_count; i++)
    for (int64_t j = 0; j < cols; j++) in[i * cols + j] = element(in_first + i, j);
  for (int64_t k = 0; k < out_count * rows; k++) out[k] = -1.0; /* poison */
  st = xpose_execute(plan, in, out);
  for (int64_t j = 0; j < out_count; j++)
    for (int64_t i = 0; i < rows; i++) wrong += out[j * rows + i] != element(i, out_first + j);
  MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("consumer: xpose %s, %d rank(s), %s, %d wrong element(s)\n", XPOSE_VERSION_STRING,
           nranks, xpose_status_string(st), all_wrong);
  xpose_plan_destroy(plan);
  free(in);
  free(out);
  MPI_Finalize();
  return st == XPOSE_SUCCESS && all_wrong == 0 ? 0 : 1;
}
