/* Zarr stores read as the tool reads an input store, each in a child of
 * its own under a time and a memory limit, for tests/zarr/fuzz_stores.py
 * to hold against an independent reading (zarr_reference.py):
 *   its arrays' metadata (xio_zarr_array_read);
 *   its netCDF-4 view made, then filled with every array's values and
 *   read back against the store (zarr_view.h), as the arrays a run
 *   copies are;
 *   each array read whole from its chunk files by the chunk reader, as
 *   the arrays a run rearranges are (zarr_source.c), and written in this
 *   machine's byte order to OUT/NAME.bin, its type and shape to
 *   OUT/NAME.txt ("f 4 3 30 10 14": kind, bytes, axes, their lengths).
 * Arrays of more than 2^24 values are left unread ("large").
 *
 *   read_stores LIST   each line of LIST: STORE OUTDIR
 *
 * For each line, one line on stdout: "STORE read", "STORE large",
 * "STORE refused MESSAGE" (the store refused, with the one message the
 * tool would give), or "STORE died SIGNAL" (a crash, a time-out, memory
 * past the limit).  Two children at a time. */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chunk_reader.h"
#include "matrix_zarr.h"
#include "zarr_meta.h"
#include "zarr_source.h"
#include "zarr_view.h"

enum { SECONDS = 20, MOST_VALUES = 1 << 24, AT_ONCE = 2 };
#define MEMORY_LIMIT ((rlim_t)3 << 30)

/* Local.  Array `name`'s values through the chunk reader, in this
 * machine's order, into out/name.bin and its description into .txt. */
static int read_array(const char *store, const char *name, const char *out, xio_error *err) {
  char shown[4700], path[4800];
  xio_zarr_array a;
  xio_matrix m;
  xio_zarr_array_path(store, name, shown, sizeof shown);
  if (xio_zarr_array_read(shown, shown, &a, NULL, NULL, NULL, err) ||
      (a.ndims && xio_open_zarr(MPI_COMM_SELF, &a, shown, 1, &m, err)))
    return -1;
  const int64_t rows = a.ndims ? m.rows : 1, cols = a.ndims ? m.cols : 1;
  unsigned char *values = malloc((size_t)(rows * cols) * a.type_size + 1);
  int rc = values ? 0 : xio_fail(err, "out of memory");
  if (rc == 0 && a.ndims) {
    xio_chunk_index *ix = xio_chunk_index_of_files(m.files, 1); /* a 1-D array's as one column */
    rc = !ix ||
                 xio_chunk_index_build(ix, MPI_COMM_NULL, H5I_INVALID_HID, H5I_INVALID_HID,
                                       &m.shape, a.type_size, shown, err) < 0 ||
                 xio_chunk_index_read(ix, &m.shape, m.elem_size, 0, rows, 0, cols, values, err)
             ? -1
             : 0;
    xio_chunk_index_free(ix);
  }
  if (rc == 0 && !a.ndims) rc = xio_zarr_scalar_read(&a, values, shown, err);
  const hid_t stored = xio_zarr_type(&a);
  const hid_t native = H5Tget_native_type(stored, H5T_DIR_ASCEND);
  if (rc == 0 && a.kind != 'S' &&
      H5Tconvert(stored, native, (size_t)(rows * cols), values, NULL, H5P_DEFAULT) < 0)
    rc = xio_fail(err, "cannot convert %s's values", shown);
  snprintf(path, sizeof path, "%s/%s.bin", out, name);
  FILE *f = rc == 0 ? fopen(path, "wb") : NULL;
  if (f) fwrite(values, a.type_size, (size_t)(rows * cols), f), fclose(f);
  snprintf(path, sizeof path, "%s/%s.txt", out, name);
  if (rc == 0 && (f = fopen(path, "w"))) {
    fprintf(f, "%c %zu %d", a.kind, a.type_size, a.ndims);
    for (int i = 0; i < a.ndims; i++) fprintf(f, " %lld", (long long)a.shape[i]);
    fclose(f);
  }
  H5Tclose(native), H5Tclose(stored);
  free(values);
  xio_error ignored;
  if (a.ndims) (void)xio_close(&m, &ignored);
  return rc;
}

/* Local.  Whether array `name` holds more than MOST_VALUES values (or
 * cannot be described: the reads then say why). */
static int large(const char *store, const char *name) {
  char shown[4700];
  xio_zarr_array a;
  xio_error ignored;
  xio_zarr_array_path(store, name, shown, sizeof shown);
  if (xio_zarr_array_read(shown, shown, &a, NULL, NULL, NULL, &ignored)) return 0;
  double values = 1;
  for (int i = 0; i < a.ndims; i++) values *= (double)a.shape[i];
  return values > MOST_VALUES;
}

/* In the child: the store read, its view at out/view.nc.  0 read, 1
 * refused (err says why), 2 large. */
static int read_case(const char *store, const char *out, xio_error *err) {
  xio_zarr_node node;
  int format;
  xio_path_array arrays = {0};
  char view[4200], warning[2300];
  snprintf(view, sizeof view, "%s/view.nc", out);
  if (xio_zarr_node_at(store, &node, &format, err)) return 1;
  if (node != XIO_ZARR_GROUP) return xio_fail(err, "%s is no group", store), 1;
  int rc = xio_zarr_group_arrays(store, store, &arrays, err) ||
                   xio_zarr_view_create(store, view, warning, sizeof warning, err)
               ? 1
               : 0;
  for (int i = 0; rc == 0 && i < arrays.count; i++)
    if (large(store, arrays.paths[i])) rc = 2;
  const xio_path_list none = {0};
  if (rc == 0 && xio_zarr_view_fill(store, view, &none, (uint64_t)1 << 20, err)) rc = 1;
  for (int i = 0; rc == 0 && i < arrays.count; i++)
    if (read_array(store, arrays.paths[i] + 1, out, err)) rc = 1;
  xio_path_array_free(&arrays);
  return rc;
}

static pid_t start_case(const char *store, const char *out, int report) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const struct rlimit memory = {MEMORY_LIMIT, MEMORY_LIMIT};
  setrlimit(RLIMIT_AS, &memory);
  alarm(SECONDS);
  xio_error err = {""};
  const int rc = read_case(store, out, &err);
  if (rc == 1) dprintf(report, "%s", err.message);
  _exit(rc);
}

typedef struct {
  pid_t pid;
  char store[4096];
  char report[4200];
} running;

static void finish_case(running *r) {
  int status = 0;
  char message[4096] = "";
  waitpid(r->pid, &status, 0);
  FILE *f = fopen(r->report, "r");
  if (f) {
    const size_t n = fread(message, 1, sizeof message - 1, f);
    message[n] = '\0';
    fclose(f);
  }
  unlink(r->report);
  for (char *c = message; *c; c++)
    if (*c == '\n') *c = '\x1e'; /* a message of more than one line shows as such */
  if (WIFSIGNALED(status))
    printf("%s died %d\n", r->store, WTERMSIG(status));
  else
    printf("%s %s %s\n", r->store,
           WEXITSTATUS(status) == 0   ? "read"
           : WEXITSTATUS(status) == 2 ? "large"
                                      : "refused",
           message);
  fflush(stdout);
  r->pid = 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: read_stores LIST\n"), 2;
  MPI_Init(&argc, &argv);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* HDF5's own words on damaged views: not the tool's */
  FILE *list = fopen(argv[1], "r");
  if (!list) return perror(argv[1]), 2;
  running slots[AT_ONCE] = {{0}};
  char line[8300];
  for (int n = 0; fgets(line, sizeof line, list); n++) {
    char store[4096], out[4096];
    if (sscanf(line, "%4095s %4095s", store, out) != 2) continue;
    running *r = &slots[n % AT_ONCE];
    if (r->pid) finish_case(r);
    snprintf(r->store, sizeof r->store, "%s", store);
    snprintf(r->report, sizeof r->report, "%s/message", out);
    FILE *report = fopen(r->report, "w");
    if (!report) return perror(r->report), 2;
    fflush(stdout);
    r->pid = start_case(store, out, fileno(report));
    fclose(report);
  }
  for (int i = 0; i < AT_ONCE; i++)
    if (slots[i].pid) finish_case(&slots[i]);
  fclose(list);
  MPI_Finalize();
  return 0;
}
