/* The command line of xpose: options, sizes, counts, usage errors. */
#include <string.h>

#include "axes.h"
#include "options.h"
#include "size.h"
#include "test_util.h"
#include "xpose.h"

static int parse(const char *line, tool_options *o, char *error) {
  static char copy[512]; /* options point into it */
  char *argv[32];
  int argc = 0;
  snprintf(copy, sizeof copy, "xpose %s", line);
  for (char *tok = strtok(copy, " "); tok && argc < 31; tok = strtok(NULL, " ")) argv[argc++] = tok;
  argv[argc] = NULL;
  error[0] = '\0';
  return tool_parse_options(argc, argv, o, error, 256);
}

static void expect_error(const char *line, const char *message) {
  tool_options o;
  char error[256];
  EXPECT(parse(line, &o, error) == -1 && strstr(error, message),
         "'%s': expected an error containing '%s', got '%s'", line, message, error);
}

static void expect_size(const char *text, uint64_t expected) {
  uint64_t got = 0;
  EXPECT(tool_parse_size(text, &got) == 0 && got == expected, "size '%s' = %llu, expected %llu",
         text, (unsigned long long)got, (unsigned long long)expected);
}

static void expect_bad_size(const char *text) {
  uint64_t got = 0;
  EXPECT(tool_parse_size(text, &got) == -1, "size '%s' accepted as %llu", text,
         (unsigned long long)got);
}

/* Positional arguments, defaults, and the output's storage: as the
 * input's unless said; --layout, --filter and --chunks. */
static void check_positionals_and_storage(void) {
  tool_options o;
  char error[256];
  EXPECT(parse("in.h5 out.h5:/t", &o, error) == 0, "%s", error);
  EXPECT(!strcmp(o.input, "in.h5") && !strcmp(o.output, "out.h5:/t"), "positional arguments");
  EXPECT(o.memory_bytes == 0 && !o.verify && !o.force && !o.quiet && !o.verbose, "defaults");
  EXPECT(parse("a b", &o, error) == 0 && o.storage.layout == XIO_LAYOUT_AS_INPUT &&
             o.storage.filter == XIO_FILTER_AS_INPUT,
         "storage defaults");
  EXPECT(parse("--layout chunked=64x1000 --filter shuffle+gzip=9 a b", &o, error) == 0 &&
             o.storage.layout == XIO_LAYOUT_CHUNKED && o.storage.chunk_ndims == 2 &&
             o.storage.chunk_dims[0] == 64 && o.storage.chunk_dims[1] == 1000 &&
             o.storage.filter == XIO_FILTER_SHUFFLE_GZIP && o.storage.gzip_level == 9,
         "--layout chunked=RxC --filter shuffle+gzip=N");
  EXPECT(parse("--layout chunked --filter gzip a b", &o, error) == 0 &&
             o.storage.chunk_ndims == 0 && o.storage.gzip_level == 4,
         "--layout chunked --filter gzip: chosen chunks, level 4");
  EXPECT(parse("--layout contiguous --filter none a b", &o, error) == 0 &&
             o.storage.layout == XIO_LAYOUT_CONTIGUOUS && o.storage.filter == XIO_FILTER_NONE,
         "--layout contiguous --filter none");
  EXPECT(parse("--layout chunked=1461x16x16 a b", &o, error) == 0 && o.storage.chunk_ndims == 3 &&
             o.storage.chunk_dims[0] == 1461 && o.storage.chunk_dims[2] == 16,
         "--layout chunked=AxBxC: a length for each axis");
  EXPECT(parse("--chunks time/1461,lat/,lon/16 a b", &o, error) == 0 &&
             !strcmp(o.chunks, "time/1461,lat/,lon/16") && o.storage.layout == XIO_LAYOUT_CHUNKED,
         "--chunks by name: chunked");
  expect_error("--chunks time/x a b", "'time/x' is not NAME/LENGTH");
  expect_error("--chunks /4 a b", "'/4' is not NAME/LENGTH");
  expect_error("--chunks t/1,t/2 a b", "names a dimension twice");
  expect_error("--chunks t/1 --layout contiguous a b", "--chunks and --layout exclude each other");
  expect_error("--layout chunked=0x4 a b", "invalid --layout");
  expect_error("--layout chunked=4x4x a b", "invalid --layout");
  expect_error("--layout chunked=4x-4 a b", "invalid --layout");
  expect_error("--layout chunked=4x a b", "invalid --layout");
  expect_error("--layout rows a b", "invalid --layout");
  expect_error("--filter gzip=0 a b", "invalid --filter");
  expect_error("--filter lzf a b", "invalid --filter");
  expect_error("--layout contiguous --filter gzip a b", "needs --layout chunked");
}

/* Budgets, backends, exchanges, verification, resume, hints, joins,
 * and the usage errors of each. */
static void check_run_options(void) {
  tool_options o;
  char error[256];
  EXPECT(parse("-m 512M --verify -f -q a.h5 b.h5", &o, error) == 0, "%s", error);
  EXPECT(o.memory_bytes == 512ull << 20 && o.verify && o.force && o.quiet, "short options");
  EXPECT(parse("a.h5 --memory=1.5G b.h5 --verbose --max-message 4K", &o, error) == 0, "%s", error);
  EXPECT(o.memory_bytes == 3ull << 29 && o.verbose && o.max_message_bytes == 4096,
         "long options after positionals");
  EXPECT(parse("--backend cuda --exchange staged --gpu-memory 8G a b", &o, error) == 0, "%s",
         error);
  EXPECT(o.backend == XPOSE_BACKEND_CUDA && o.exchange == XPOSE_EXCHANGE_STAGED &&
             o.gpu_memory_bytes == 8ull << 30,
         "GPU options");
  EXPECT(parse("--backend host --exchange mpi a b", &o, error) == 0 &&
             o.backend == XPOSE_BACKEND_HOST && o.exchange == XPOSE_EXCHANGE_MPI,
         "%s", error);
  EXPECT(parse("a b", &o, error) == 0 && o.backend == XPOSE_BACKEND_AUTO &&
             o.exchange == XPOSE_EXCHANGE_AUTO,
         "backend and exchange default to auto");
  EXPECT(parse("a b", &o, error) == 0 && o.verify == TOOL_VERIFY_WRITTEN && !o.resume &&
             o.checkpoint_seconds == 10 && !o.check && !o.json,
         "verification, resume and checkpoint defaults");
  EXPECT(parse("--no-verify -r --checkpoint 0.5 --json a b", &o, error) == 0 &&
             o.verify == TOOL_VERIFY_NONE && o.resume && o.checkpoint_seconds == 0.5 && o.json,
         "%s", error);
  EXPECT(parse("--verify --verify a b", &o, error) == 0 && o.verify == TOOL_VERIFY_INPUT, "%s",
         error);
  EXPECT(parse("verify -m 1G a b", &o, error) == 0 && o.check && o.memory_bytes == 1ull << 30 &&
             !strcmp(o.input, "a") && !strcmp(o.output, "b"),
         "the verify subcommand: %s", error);
  EXPECT(parse("--check a b", &o, error) == 0 && o.check, "--check: %s", error);
  EXPECT(parse("--mpi-hint cb_nodes=2 a --mpi-hint romio_ds_write=disable b", &o, error) == 0 &&
             o.mpi_hint_count == 2 && !strcmp(o.mpi_hints[0], "cb_nodes=2") &&
             !strcmp(o.mpi_hints[1], "romio_ds_write=disable"),
         "--mpi-hint: %s", error);
  EXPECT(parse("--help", &o, error) == 0 && o.help, "--help alone");
  EXPECT(parse("-V", &o, error) == 0 && o.version, "-V alone");

  expect_error("--frobnicate a b", "unknown option '--frobnicate'");
  expect_error("-x a b", "unknown option '-x'");
  expect_error("a b --memory", "option '--memory' needs a value");
  expect_error("a", "missing arguments");
  EXPECT(parse("a b c", &o, error) == 0 && o.input_count == 2, "joined alone: %s", error);
  EXPECT(parse("verify a b c", &o, error) == 0 && o.check && o.input_count == 2,
         "joined inputs verified: %s", error);
  expect_error("--concat time a b", "--concat time joins several inputs: give two or more");
  EXPECT(parse("--concat time a b c", &o, error) == 0 && !strcmp(o.concat, "time"), "--concat: %s",
         error);
  expect_error("--dims x,y --inputs /nonexistent/list a",
               "--inputs /nonexistent/list: No such file");
  EXPECT(parse("--dims lat,lon,time a b c d", &o, error) == 0 && o.input_count == 3 &&
             !strcmp(o.inputs[0], "a") && !strcmp(o.inputs[2], "c") && !strcmp(o.input, "a") &&
             !strcmp(o.output, "d"),
         "inputs joined: %s", error);
  expect_error("--memory 12Q a b", "invalid --memory '12Q'");
  expect_error("--memory 0 a b", "invalid --memory '0'");
  expect_error("--max-message 2G a b", "invalid --max-message '2G'");
  expect_error("-q -v a b", "--quiet and --verbose");
  expect_error("--backend gpu a b", "invalid --backend 'gpu'");
  expect_error("--exchange smoke a b", "invalid --exchange 'smoke'");
  expect_error("--backend host --exchange nccl a b", "need --backend cuda or auto");
  expect_error("--backend host --exchange p2p a b", "need --backend cuda or auto");
  EXPECT(parse("--exchange p2p a b", &o, error) == 0 && o.exchange == XPOSE_EXCHANGE_P2P, "%s",
         error);
  expect_error("--gpu-memory lots a b", "invalid --gpu-memory 'lots'");
  expect_error("--verify --no-verify a b", "--verify and --no-verify exclude each other");
  expect_error("--checkpoint -1 a b", "invalid --checkpoint '-1'");
  expect_error("--checkpoint soon a b", "invalid --checkpoint 'soon'");
  expect_error("verify a", "missing arguments");
  expect_error("--mpi-hint striping a b", "invalid --mpi-hint 'striping': expected KEY=VALUE");
  expect_error("--mpi-hint =4 a b", "invalid --mpi-hint '=4'");
}

/* Sizes (--memory's), counts and bytes as a run says them. */
static void check_sizes_and_counts(void) {
  expect_size("4096", 4096);
  expect_size("1K", 1024);
  expect_size("2KiB", 2048);
  expect_size("3mb", 3ull << 20);
  expect_size("1T", 1ull << 40);
  expect_size("0.5K", 512);
  expect_size("1.25G", 5ull << 28);
  expect_size("7B", 7);
  expect_size("16777215T", 16777215ull << 40);
  const char *bad[] = {"",
                       "G",
                       "-1",
                       "+1",
                       "1.",
                       ".5",
                       "1.5.5",
                       "12Q",
                       "1 G",
                       "0",
                       "0.0001K",
                       "16777216T",
                       "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect_bad_size(bad[i]);

  int64_t v = 0;
  EXPECT(tool_parse_count("9223372036854775807", &v) == 0 && v == INT64_MAX, "INT64_MAX");
  const char *bad_counts[] = {"0", "-1", "12a", "", "9223372036854775808", "1e3"};
  for (size_t i = 0; i < sizeof bad_counts / sizeof *bad_counts; i++)
    EXPECT(tool_parse_count(bad_counts[i], &v) == -1, "count '%s' accepted", bad_counts[i]);

  char text[32];
  tool_format_bytes(512, text, sizeof text);
  EXPECT(!strcmp(text, "512 B"), "%s", text);
  tool_format_bytes(3ull << 29, text, sizeof text);
  EXPECT(!strcmp(text, "1.50 GiB"), "%s", text);
}

/* --dims by ncpdq's rule: the named axes take the places they held. */
static void check_dims(void) {
  const char *const axes4[] = {"time", "lev", "lat", "lon"};
  int order[4];
  EXPECT(tool_axes_by_names(4, axes4, "lat,lon,time", order) == 3 && order[0] == 2 &&
             order[1] == 1 && order[2] == 3 && order[3] == 0,
         "(time,lev,lat,lon) by lat,lon,time: %d %d %d %d", order[0], order[1], order[2], order[3]);
  EXPECT(tool_axes_by_names(4, axes4, "lon,station,lat", order) == 2 && order[0] == 0 &&
             order[1] == 1 && order[2] == 3 && order[3] == 2,
         "a name of no axis passed over: %d %d %d %d", order[0], order[1], order[2], order[3]);
  EXPECT(tool_axes_by_names(4, axes4, "x,y", order) == 0 && order[0] == 0 && order[3] == 3,
         "no axis named: identity");
  char why[256];
  EXPECT(tool_axes_check_names("lat,lon,lat", why, sizeof why) == -1 && strstr(why, "twice"),
         "a name twice: %s", why);
  EXPECT(tool_axes_check_names("lat,,lon", why, sizeof why) == -1 && strstr(why, "empty"),
         "an empty name: %s", why);
  EXPECT(tool_axes_check_names("lat,lon,time", why, sizeof why) == 0, "good names refused");
}

/* Every order of 3, 4 and 5 axes in the fewest moves, each of the
 * dataset the moves before it left, its leading axes reordered as the
 * move says: 2 at most for 3 and 4 axes, 3 for 5; and the moves chosen
 * for ncpdq's orders. */
static void check_moves(void) {
  for (int n = 3; n <= 5; n++) {
    int perm[5] = {0, 1, 2, 3, 4}, most = 0;
    do {
      tool_move moves[3];
      int now[5], next[5];
      const int count = tool_axes_moves(n, perm, NULL, 3, moves);
      for (int i = 0; i < n; i++) now[i] = i;
      for (int k = 0; k < count; k++) {
        const int l = moves[k].lead, s = moves[k].split, t = moves[k].trail, *a = now;
        EXPECT(0 <= l && l < s && s < t && t <= n, "move %d: %d %d %d", k, l, s, t);
        unsigned seen = 0;
        for (int i = 0; i < l; i++) seen |= 1u << moves[k].lead_order[i];
        EXPECT(seen == (1u << l) - 1, "move %d: its lead order is not one of its %d axes", k, l);
        int m = 0;
        for (int i = 0; i < l; i++) next[m++] = a[moves[k].lead_order[i]];
        for (int i = s; i < t; i++) next[m++] = a[i];
        for (int i = l; i < s; i++) next[m++] = a[i];
        for (int i = t; i < n; i++) next[m++] = a[i];
        memcpy(now, next, sizeof now);
      }
      EXPECT(count >= 0 && memcmp(now, perm, sizeof *now * (size_t)n) == 0,
             "%d axes: %d %d %d ... in %d moves", n, perm[0], perm[1], perm[2], count);
      if (count > most) most = count;
    } while (tool_axes_next_order(perm, n));
    EXPECT(most == (n <= 4 ? 2 : 3), "%d axes: at most %d moves", n, most);
  }
  const int reversed3[] = {2, 1, 0}, rotated[] = {1, 2, 0}, reversed4[] = {3, 2, 1, 0};
  tool_move moves[3];
  EXPECT(tool_axes_moves(3, reversed3, NULL, 3, moves) == 2, "(z,y,x) in 2 moves");
  EXPECT(tool_axes_moves(3, rotated, NULL, 3, moves) == 1 && moves[0].lead == 0 &&
             moves[0].split == 1 && moves[0].trail == 3,
         "(y,z,x) is the fold 0, 1, 3");
  EXPECT(tool_axes_moves(4, reversed4, NULL, 1, moves) == -1, "(d,c,b,a) in 1 move");
  /* ncpdq's (time, lev, lat, lon) -> (lat, lev, lon, time): of the two-move
   * ways, one that moves whole matrices (no axis left in front), not 721
   * matrices, one per lat */
  const int ncpdq[] = {2, 1, 3, 0};
  const int64_t era5[] = {1461, 37, 721, 1440};
  EXPECT(tool_axes_moves(4, ncpdq, era5, 3, moves) == 2 && moves[0].lead == 0 && moves[1].lead == 0,
         "(lat, lev, lon, time): %d %d %d, %d %d %d", moves[0].lead, moves[0].split, moves[0].trail,
         moves[1].lead, moves[1].split, moves[1].trail);
  /* reversing (time, lev, lat, lon) in two: (lat, lon) transposed in each
   * of the 2920 (time, lev) matrices, which land in (lev, time) order,
   * then (lev, time) x (lon, lat) transposed whole */
  const int reversed[] = {3, 2, 1, 0};
  const int64_t small[] = {365, 8, 90, 180};
  EXPECT(tool_axes_moves(4, reversed, small, 3, moves) == 2 && moves[0].lead == 2 &&
             moves[0].split == 3 && moves[0].trail == 4 && moves[0].lead_order[0] == 1 &&
             moves[0].lead_order[1] == 0 && moves[1].lead == 0 && moves[1].split == 2 &&
             moves[1].trail == 4,
         "reversed: %d %d %d (%d %d), then %d %d %d", moves[0].lead, moves[0].split, moves[0].trail,
         moves[0].lead_order[0], moves[0].lead_order[1], moves[1].lead, moves[1].split,
         moves[1].trail);
}

int main(void) {
  check_positionals_and_storage();
  check_run_options();
  check_sizes_and_counts();
  check_dims();
  check_moves();
  if (test_failures) return 1;
  printf("options: all checks passed\n");
  return 0;
}
