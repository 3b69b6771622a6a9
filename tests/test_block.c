/* xpose_block_range: coverage, contiguity, balance, empty parts, 64-bit sizes;
 * xpose_unit_range: the same in whole units, the last one short. */
#include "test_util.h"
#include "xpose.h"

static void check_all_parts(int64_t n, int64_t parts) {
  int64_t next = 0, max_count = 0, min_count = INT64_MAX, prev = INT64_MAX;
  for (int64_t p = 0; p < parts; p++) {
    int64_t first = -1, count = -1;
    EXPECT(xpose_block_range(n, parts, p, &first, &count) == XPOSE_SUCCESS, "n=%lld", (long long)n);
    EXPECT(first == next, "n=%lld parts=%lld part %lld starts at %lld, expected %lld", (long long)n,
           (long long)parts, (long long)p, (long long)first, (long long)next);
    EXPECT(count <= prev, "counts must not grow with the part index");
    if (p >= n)
      EXPECT(count == 0, "part %lld of %lld items owns %lld", (long long)p, (long long)n,
             (long long)count);
    next = first + count;
    prev = count;
    if (count > max_count) max_count = count;
    if (count < min_count) min_count = count;
  }
  EXPECT(next == n, "parts cover %lld of %lld items", (long long)next, (long long)n);
  EXPECT(max_count - min_count <= 1, "unbalanced: %lld vs %lld", (long long)max_count,
         (long long)min_count);
}

/* For part counts too large to walk: the closed forms at the boundaries. */
static void check_sampled(int64_t n, int64_t parts) {
  const int64_t base = n / parts, extra = n % parts;
  const int64_t samples[] = {0, 1, extra - 1, extra, extra + 1, parts / 2, parts - 2, parts - 1};
  for (size_t s = 0; s < sizeof samples / sizeof *samples; s++) {
    const int64_t p = samples[s];
    if (p < 0 || p >= parts) continue;
    int64_t first, count, next_first, next_count;
    EXPECT(xpose_block_range(n, parts, p, &first, &count) == XPOSE_SUCCESS, "sampled");
    EXPECT(count == base + (p < extra), "part %lld count %lld", (long long)p, (long long)count);
    if (p + 1 < parts) {
      xpose_block_range(n, parts, p + 1, &next_first, &next_count);
      EXPECT(next_first == first + count, "gap after part %lld", (long long)p);
    } else {
      EXPECT(first + count == n, "last part ends at %lld, not %lld", (long long)(first + count),
             (long long)n);
    }
  }
}

/* Units: parts own whole units (the last may be short), cover n in
 * order, and hold as many units as xpose_block_range gives them. */
static void check_units(int64_t n, int64_t unit, int64_t parts) {
  const int64_t units = unit > 1 ? n / unit + (n % unit != 0) : n;
  int64_t next = 0;
  for (int64_t p = 0; p < parts; p++) {
    int64_t first = -1, count = -1, u0, nu;
    EXPECT(xpose_unit_range(n, unit, parts, p, &first, &count) == XPOSE_SUCCESS, "unit range");
    xpose_block_range(units, parts, p, &u0, &nu);
    EXPECT(first == next, "n=%lld unit=%lld part %lld starts at %lld", (long long)n,
           (long long)unit, (long long)p, (long long)first);
    const int64_t u = unit > 1 ? unit : 1;
    const int64_t want = u0 + nu < units ? nu * u : n - (u0 < units ? u0 * u : n);
    EXPECT(count == want, "n=%lld unit=%lld part %lld owns %lld, not %lld", (long long)n,
           (long long)unit, (long long)p, (long long)count, (long long)want);
    EXPECT(count == 0 || first % u == 0, "part %lld starts off a unit", (long long)p);
    next = first + count;
  }
  EXPECT(next == n, "units cover %lld of %lld items", (long long)next, (long long)n);
}

int main(void) {
  for (int64_t n = 0; n <= 60; n++)
    for (int64_t unit = 0; unit <= 13; unit++)
      for (int64_t parts = 1; parts <= 9; parts++) check_units(n, unit, parts);
  check_units(INT64_MAX, (int64_t)1 << 40, 7);
  check_units(INT64_MAX - 1, INT64_MAX, 3);
  for (int64_t n = 0; n <= 60; n++)
    for (int64_t parts = 1; parts <= 17; parts++) check_all_parts(n, parts);
  const int64_t sizes[] = {97,       1009, 65536, 1000003, (int64_t)1 << 40, ((int64_t)1 << 62) + 3,
                           INT64_MAX};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    check_all_parts(sizes[s], 3);
    check_all_parts(sizes[s], 1000);
    check_sampled(sizes[s], ((int64_t)1 << 31) + 11);
    check_sampled(sizes[s], INT64_MAX);
  }
  int64_t first, count;
  EXPECT(xpose_block_range(-1, 2, 0, &first, &count) == XPOSE_ERROR_INVALID_ARGUMENT, "n < 0");
  EXPECT(xpose_unit_range(5, -1, 2, 0, &first, &count) == XPOSE_ERROR_INVALID_ARGUMENT, "unit < 0");
  EXPECT(xpose_block_range(5, 0, 0, &first, &count) == XPOSE_ERROR_INVALID_ARGUMENT, "parts 0");
  EXPECT(xpose_block_range(5, 2, 2, &first, &count) == XPOSE_ERROR_INVALID_ARGUMENT, "index out");
  EXPECT(xpose_block_range(5, 2, -1, &first, &count) == XPOSE_ERROR_INVALID_ARGUMENT, "index < 0");
  EXPECT(xpose_block_range(5, 2, 0, NULL, &count) == XPOSE_ERROR_INVALID_ARGUMENT, "NULL first");
  if (test_failures) return 1;
  printf("block distribution: all checks passed\n");
  return 0;
}
