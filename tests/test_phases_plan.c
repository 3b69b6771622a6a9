/* A rechunk's two phases planned (phases_plan.h): batches cover every
 * record once and never cross an output chunk's run along the first axis,
 * tiles cover the other axes once, both phases fit the budget, a budget
 * under the least is refused, and boxes copy exactly. */
#include <string.h>

#include "phases_plan.h"
#include "test_util.h"

static void check_plan(int ndims, const int64_t *dims, const int64_t *chunk, int64_t in_chunk0,
                       uint64_t budget, int ranks, int threads) {
  xio_phases_plan p;
  const xio_phases_problem q = {ndims, dims, chunk, NULL, 4, in_chunk0, 0, budget, ranks, threads};
  const int rc = xio_phases_plan_make(&q, &p);
  EXPECT(p.least_budget > 0, "a least budget is always said");
  if (rc != 0) {
    EXPECT(budget < p.least_budget, "refused at %llu, least %llu", (unsigned long long)budget,
           (unsigned long long)p.least_budget);
    return;
  }
  EXPECT(xio_phases_batch_bytes(&p, p.batch, threads) <= budget, "phase 1 over the budget");
  EXPECT(xio_phases_gather_bytes(&p, p.chunks_at_once, threads) <= budget,
         "phase 2 over the budget");
  const int64_t planned = p.chunks_at_once; /* chunks that compress to a quarter */
  xio_phases_plan_rooms(&p, p.chunk_bytes / 4, budget, threads);
  EXPECT(p.chunks_at_once >= planned && p.chunks_at_once <= (threads > 1 ? threads : 1) &&
             xio_phases_gather_bytes(&p, p.chunks_at_once, threads) <= budget,
         "phase 2 with rooms: %lld at once, planned %lld", (long long)p.chunks_at_once,
         (long long)planned);
  EXPECT(in_chunk0 <= 1 || p.batch < in_chunk0 || p.batch % in_chunk0 == 0,
         "batch %lld not whole input chunks of %lld", (long long)p.batch, (long long)in_chunk0);
  int64_t next = 0; /* every record once, in order, no batch across a run */
  for (int64_t b = 0; b < p.batches; b++) {
    int64_t first, records;
    xio_phases_batch(&p, b, &first, &records);
    if (!records) continue;
    EXPECT(first == next, "batch %lld starts at %lld, not %lld", (long long)b, (long long)first,
           (long long)next);
    EXPECT(first / chunk[0] == (first + records - 1) / chunk[0], "batch %lld crosses a run",
           (long long)b);
    next = first + records;
  }
  EXPECT(next == dims[0], "batches end at %lld of %lld", (long long)next, (long long)dims[0]);
  uint64_t values = 0, scratch = 0; /* tiles cover the other axes once */
  for (int64_t t = 0; t < p.tiles; t++) {
    int64_t origin[XIO_MAX_DIMS], extent[XIO_MAX_DIMS];
    xio_phases_tile(&p, t, origin, extent);
    for (int a = 1; a < ndims; a++)
      EXPECT(origin[a] % chunk[a] == 0 && extent[a] > 0 && origin[a] + extent[a] <= dims[a],
             "tile %lld axis %d", (long long)t, a);
    values += xio_phases_piece_bytes(&p, t, dims[0]) / 4;
    scratch += xio_phases_piece_bytes(&p, t, dims[0]);
  }
  uint64_t all = 1;
  for (int a = 0; a < ndims; a++) all *= (uint64_t)dims[a];
  EXPECT(values == all, "tiles hold %llu values of %llu", (unsigned long long)values,
         (unsigned long long)all);
  EXPECT(p.scratch_bytes >= scratch, "the scratch file's bound under its values");
}

static void test_plans(void) {
  const int64_t cube[3] = {7300, 90, 180}, series[3] = {7300, 16, 16}, odd[3] = {397, 45, 61},
                odd_chunk[3] = {150, 8, 16}, four[4] = {120, 3, 30, 40},
                four_chunk[4] = {120, 1, 8, 8}, long_chunk[3] = {8760, 16, 16};
  for (uint64_t budget = 1 << 20; budget <= (uint64_t)1 << 32; budget *= 2)
    for (int ranks = 1; ranks <= 16; ranks *= 4)
      for (int threads = 1; threads <= 8; threads *= 2) {
        check_plan(3, cube, series, 1, budget, ranks, threads);
        check_plan(3, cube, long_chunk, 1, budget, ranks, threads); /* a chunk past the axis */
        check_plan(3, odd, odd_chunk, 7, budget, ranks, threads);
        check_plan(4, four, four_chunk, 1, budget, ranks, threads);
      }
}

static void test_copy_box(void) {
  enum { A = 5, B = 6, C = 7 };
  unsigned char src[A * B * C], dst[A * B * C];
  for (int i = 0; i < A * B * C; i++) src[i] = (unsigned char)(i + 1);
  memset(dst, 0, sizeof dst);
  const int64_t dims[3] = {A, B, C}, count[3] = {2, 3, 4}, from[3] = {1, 2, 3}, to[3] = {3, 0, 1};
  xio_copy_box(3, count, 1, src, dims, from, dst, dims, to);
  int copied = 0;
  for (int a = 0; a < A; a++)
    for (int b = 0; b < B; b++)
      for (int c = 0; c < C; c++) {
        const int in = a >= 3 && a < 5 && b < 3 && c >= 1 && c < 5;
        const unsigned char want = in ? src[((a - 3 + 1) * B + (b + 2)) * C + (c - 1 + 3)] : 0;
        EXPECT(dst[(a * B + b) * C + c] == want, "box at %d %d %d", a, b, c);
        copied += in;
      }
  EXPECT(copied == 2 * 3 * 4, "%d values in the box", copied);
}

/* (time, lat, lon) chunks gathered as 5 x 3 x 4 boxes, into (lat, lon,
 * time): every value at its permuted place. */
static void test_permute(void) {
  const int64_t dims[3] = {50, 9, 8}, out_chunk[3] = {3, 4, 5};
  const int order[3] = {1, 2, 0};
  xio_phases_plan p;
  const xio_phases_problem q = {3, dims, out_chunk, order, 1, 1, 0, (uint64_t)1 << 30, 1, 1};
  EXPECT(xio_phases_plan_make(&q, &p) == 0, "planned");
  EXPECT(p.permuted && p.chunk[0] == 5 && p.chunk[1] == 3 && p.chunk[2] == 4,
         "the chunk in the input's axes: %lld %lld %lld", (long long)p.chunk[0],
         (long long)p.chunk[1], (long long)p.chunk[2]);
  unsigned char box[60], out[60];
  for (int i = 0; i < 60; i++) box[i] = (unsigned char)(i + 1);
  xio_phases_permute(&p, box, out, 0);
  for (int t = 0; t < 5; t++)
    for (int y = 0; y < 3; y++)
      for (int x = 0; x < 4; x++)
        EXPECT(out[(y * 4 + x) * 5 + t] == box[(t * 3 + y) * 4 + x], "value %d %d %d", t, y, x);
  /* 2-byte values as byte planes: each plane permuted as the values are */
  const xio_phases_problem q2 = {3, dims, out_chunk, order, 2, 1, 0, (uint64_t)1 << 30, 1, 1};
  EXPECT(xio_phases_plan_make(&q2, &p) == 0, "planned");
  unsigned char planes[120], moved[120], values[120], back[120];
  for (int i = 0; i < 120; i++) values[i] = (unsigned char)(i * 7 + 3);
  for (int i = 0; i < 60; i++) planes[i] = values[2 * i], planes[60 + i] = values[2 * i + 1];
  xio_phases_permute(&p, values, back, 0);
  xio_phases_permute(&p, planes, moved, 1);
  for (int i = 0; i < 60; i++)
    EXPECT(moved[i] == back[2 * i] && moved[60 + i] == back[2 * i + 1], "planes at %d", i);
}

int main(void) {
  test_plans();
  test_copy_box();
  test_permute();
  if (test_failures) return 1;
  printf("phases plan: all checks passed\n");
  return 0;
}
