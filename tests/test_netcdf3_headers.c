/* Damaged netCDF-3 headers: classic, 64-bit offset and CDF-5 files made
 * by netCDF-C, 1-4 bytes of their headers changed or the file cut short,
 * cases from a fixed seed.  Each case runs in a child of its own under an
 * alarm: xpose's header check (netcdf3.h) refuses it, or accepts it and
 * then netCDF-C opens it and reads every variable, with values equal to
 * those xpose reads itself.  A signal (a crash, or the alarm of a hang) or
 * a difference fails the test.  Usage: test_netcdf3_headers [CASES [SEED]].
 * Skipped (77) in builds without netCDF-C. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#ifndef XIO_HAVE_NETCDF
int main(void) {
  puts("skipped: this build reads no netCDF-3 files");
  return 77;
}
#else
#include <netcdf.h>

#include "netcdf3.h"

enum { REFUSED = 0, NETCDF_REFUSED = 1, ACCEPTED = 2, DIFFERENT = 3, RECORDS = 4 };
enum { LAT = 3, LON = 5 };

static int check(int status, const char *what) {
  if (status != NC_NOERR) {
    fprintf(stderr, "%s: %s\n", what, nc_strerror(status));
    exit(1);
  }
  return status;
}

/* A small CF-like file: time unlimited, coordinates, two record
 * variables of different types, a fixed one, attributes. */
static void make_seed(const char *path, int mode) {
  int nc, time, lat, lon, t, la, tas, pr, orog;
  check(nc_create(path, NC_CLOBBER | mode, &nc), path);
  check(nc_put_att_text(nc, NC_GLOBAL, "title", 5, "fuzz!"), "title");
  check(nc_def_dim(nc, "time", NC_UNLIMITED, &time), "time");
  check(nc_def_dim(nc, "lat", LAT, &lat), "lat");
  check(nc_def_dim(nc, "lon", LON, &lon), "lon");
  const int cube[3] = {time, lat, lon}, plane[2] = {lat, lon};
  check(nc_def_var(nc, "time", NC_DOUBLE, 1, &time, &t), "time");
  check(nc_put_att_text(nc, t, "units", 22, "days since 2000-01-01"), "units");
  check(nc_def_var(nc, "lat", NC_FLOAT, 1, &lat, &la), "lat");
  check(nc_def_var(nc, "tas", NC_FLOAT, 3, cube, &tas), "tas");
  const float fill = 1e20f;
  check(nc_put_att_float(nc, tas, "_FillValue", NC_FLOAT, 1, &fill), "fill");
  check(nc_def_var(nc, "pr", NC_SHORT, 3, cube, &pr), "pr");
  check(nc_def_var(nc, "orog", NC_DOUBLE, 2, plane, &orog), "orog");
  check(nc_enddef(nc), "enddef");
  double times[RECORDS], heights[LAT * LON];
  float lats[LAT], temperatures[RECORDS * LAT * LON];
  short rain[RECORDS * LAT * LON];
  for (int i = 0; i < RECORDS * LAT * LON; i++) {
    temperatures[i] = 250.0f + (float)i * 0.5f;
    rain[i] = (short)(i * 37 - 900);
    if (i < RECORDS) times[i] = i + 0.25;
    if (i < LAT) lats[i] = -45.0f + 45.0f * (float)i;
    if (i < LAT * LON) heights[i] = 100.0 + i;
  }
  const size_t start[3] = {0, 0, 0}, count[3] = {RECORDS, LAT, LON};
  check(nc_put_vara_double(nc, t, start, count, times), "times");
  check(nc_put_var_float(nc, la, lats), "lats");
  check(nc_put_vara_float(nc, tas, start, count, temperatures), "tas");
  check(nc_put_vara_short(nc, pr, start, count, rain), "pr");
  check(nc_put_var_double(nc, orog, heights), "orog");
  check(nc_close(nc), path);
}

/* Every variable as netCDF-C reads it and as xpose reads it, compared. */
static int same_values(int nc, const char *path, const xio_nc3_var *v) {
  int id, ndims;
  if (nc_inq_varid(nc, v->name, &id) != NC_NOERR || nc_inq_varndims(nc, id, &ndims) != NC_NOERR ||
      ndims != v->ndims)
    return 0;
  int dimids[NC_MAX_VAR_DIMS];
  xio_shape shape = {.ndims = v->ndims};
  uint64_t values = 1;
  (void)nc_inq_vardimid(nc, id, dimids);
  for (int d = 0; d < v->ndims; d++) {
    size_t length = 0;
    (void)nc_inq_dimlen(nc, dimids[d], &length);
    if ((int64_t)length != v->dims[d]) return 0;
    shape.dims[d] = v->dims[d];
    values *= (uint64_t)v->dims[d];
  }
  if (values == 0) return 1;
  const size_t bytes = (size_t)values * v->type_size;
  unsigned char *theirs = malloc(bytes), *ours = malloc(bytes);
  xio_nc3_source *source = NULL;
  xio_error err;
  const int64_t rows = v->ndims ? v->dims[0] : 1, cols = (int64_t)values / rows;
  const int same =
      theirs && ours && nc_get_var(nc, id, theirs) == NC_NOERR &&
      xio_nc3_source_open(path, v->name, &shape, path, &source, &err) == 0 &&
      xio_nc3_source_read(source, cols, v->type_size, 0, rows, 0, cols, ours, &err) == 0 &&
      memcmp(theirs, ours, bytes) == 0;
  xio_nc3_source_free(source);
  free(theirs);
  free(ours);
  return same;
}

/* In the child: what became of the file at path. */
static int try_case(const char *path) {
  xio_nc3_layout l;
  xio_error err;
  int nc;
  if (xio_nc3_layout_read(path, &l, &err)) return REFUSED;
  if (nc_open(path, NC_NOWRITE, &nc) != NC_NOERR) {
    xio_nc3_layout_free(&l);
    return NETCDF_REFUSED;
  }
  int outcome = ACCEPTED;
  for (int i = 0; i < l.nvars && outcome == ACCEPTED; i++)
    if (!same_values(nc, path, &l.vars[i])) {
      fprintf(stderr, "%s: variable %s differs\n", path, l.vars[i].name);
      outcome = DIFFERENT;
    }
  (void)nc_close(nc);
  xio_nc3_layout_free(&l);
  return outcome;
}

static uint64_t next(uint64_t *state) { /* splitmix64 */
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

typedef struct {
  unsigned char *bytes;
  size_t size, header; /* the header: up to the first variable's data */
} seed_file;

/* The seed with 1-4 of its header's bytes changed, or cut short (one
 * case in five); returns the new size. */
static size_t damage(const seed_file *seed, unsigned char *to, uint64_t *rng) {
  memcpy(to, seed->bytes, seed->size);
  if (next(rng) % 5 == 0) return (size_t)(next(rng) % seed->size);
  for (int n = 1 + (int)(next(rng) % 4); n > 0; n--) {
    const size_t at = (size_t)(next(rng) % seed->header);
    const uint64_t how = next(rng) % 4;
    to[at] = how == 0   ? (unsigned char)next(rng)
             : how == 1 ? 0
             : how == 2 ? 0xFF
                        : (unsigned char)(to[at] ^ 1u << (next(rng) % 8));
  }
  return seed->size;
}

static int load_seed(const char *path, int mode, seed_file *seed) {
  make_seed(path, mode);
  xio_nc3_layout l;
  xio_error err;
  FILE *f = fopen(path, "rb");
  if (!f || xio_nc3_layout_read(path, &l, &err)) return -1;
  seed->header = SIZE_MAX;
  for (int i = 0; i < l.nvars; i++)
    if (l.vars[i].begin < seed->header) seed->header = (size_t)l.vars[i].begin;
  xio_nc3_layout_free(&l);
  fseek(f, 0, SEEK_END);
  seed->size = (size_t)ftell(f);
  rewind(f);
  seed->bytes = malloc(seed->size);
  const int ok = seed->bytes && fread(seed->bytes, 1, seed->size, f) == seed->size;
  fclose(f);
  return ok ? 0 : -1;
}

int main(int argc, char **argv) {
  const long cases = argc > 1 ? atol(argv[1]) : 1500;
  uint64_t rng = argc > 2 ? strtoull(argv[2], NULL, 0) : 20261129;
  char dir[] = "/tmp/xpose-nc3-fuzz-XXXXXX", path[64], seed_path[3][64];
  if (!mkdtemp(dir)) return 1;
  static const int modes[3] = {0, NC_64BIT_OFFSET, NC_64BIT_DATA};
  seed_file seeds[3];
  for (int s = 0; s < 3; s++) {
    snprintf(seed_path[s], sizeof seed_path[s], "%s/seed%d.nc", dir, s);
    EXPECT(load_seed(seed_path[s], modes[s], &seeds[s]) == 0, "seed %d", s);
    EXPECT(try_case(seed_path[s]) == ACCEPTED, "the undamaged seed %d", s);
  }
  if (test_failures) return 1;
  long outcomes[4] = {0};
  snprintf(path, sizeof path, "%s/case.nc", dir);
  for (long c = 0; c < cases; c++) {
    const seed_file *seed = &seeds[c % 3];
    unsigned char buf[4096];
    const size_t size = damage(seed, buf, &rng);
    FILE *f = fopen(path, "wb");
    EXPECT(f && fwrite(buf, 1, size, f) == size && fclose(f) == 0, "writing case %ld", c);
    const pid_t child = fork();
    if (child == 0) {
      alarm(10); /* a hang ends in SIGALRM */
      _exit(try_case(path));
    }
    int status = 0;
    EXPECT(child > 0 && waitpid(child, &status, 0) == child, "case %ld: fork", c);
    if (WIFSIGNALED(status) || WEXITSTATUS(status) == DIFFERENT) {
      char kept[96];
      snprintf(kept, sizeof kept, "%s/failed-%ld.nc", dir, c);
      (void)rename(path, kept);
      EXPECT(0, "case %ld (%s): %s %d", c, kept,
             WIFSIGNALED(status) ? "ended by signal" : "read differently, status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    } else if (WEXITSTATUS(status) <= ACCEPTED) {
      outcomes[WEXITSTATUS(status)]++;
    }
  }
  printf(
      "%ld damaged headers: %ld refused by xpose, %ld accepted and refused by netCDF-C, %ld "
      "accepted and read alike by both, %d failed\n",
      cases, outcomes[REFUSED], outcomes[NETCDF_REFUSED], outcomes[ACCEPTED], test_failures);
  for (int s = 0; s < 3; s++) {
    (void)unlink(seed_path[s]);
    free(seeds[s].bytes);
  }
  (void)unlink(path);
  if (!test_failures) (void)rmdir(dir);
  return test_failures ? 1 : 0;
}
#endif
