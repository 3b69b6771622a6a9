#include "h5_verify.h"

#include <stdio.h>
#include <stdlib.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "slab_walk.h"

/* Sum of element checksums of m.  With `transposed`, m is the output and
 * its element (r, c) sits at input position (c, r). */
static int checksum(const xio_matrix *m, int transposed, uint64_t budget, uint64_t *sum,
                    xio_error *err) {
  const size_t es = m->elem_size;
  xio_slab_walk walk;
  if (xio_slab_walk_init(m->comm, m->rows, m->cols, es, budget, &walk, err)) return -1;
  unsigned char *buf = malloc((size_t)(walk.piece_rows * walk.piece_cols) * es + 1);
  int rc = buf ? 0 : xio_fail(err, "cannot allocate the verification buffer");
  rc = xio_agree(m->comm, rc, err);
  uint64_t total = 0;
  for (int64_t p = 0; rc == 0 && p < walk.total; p++) {
    int64_t r0, nr, c0, nc;
    xio_slab_walk_piece(&walk, p, &r0, &nr, &c0, &nc);
    rc = xio_read_block(m, r0, nr, c0, nc, buf, err);
    for (int64_t i = 0; rc == 0 && i < nr; i++)
      for (int64_t j = 0; j < nc; j++) {
        const uint64_t r = (uint64_t)(r0 + i), c = (uint64_t)(c0 + j);
        const uint64_t position =
            transposed ? c * (uint64_t)m->rows + r : r * (uint64_t)m->cols + c;
        total += XXH3_64bits_withSeed(buf + (size_t)(i * nc + j) * es, es, position);
      }
  }
  free(buf);
  if (rc) return -1;
  return XIO_MPI(MPI_Allreduce(&total, sum, 1, MPI_UINT64_T, MPI_SUM, m->comm), err);
}

int xio_verify_transpose(const xio_matrix *in, const xio_matrix *out, uint64_t memory_budget,
                         int *match, char *detail, size_t detail_size, xio_error *err) {
  *match = 0;
  if (out->rows != in->cols || out->cols != in->rows) {
    snprintf(detail, detail_size, "output is %lld x %lld, expected %lld x %lld",
             (long long)out->rows, (long long)out->cols, (long long)in->cols, (long long)in->rows);
    return 0;
  }
  if (H5Tequal(in->type, out->type) <= 0) {
    snprintf(detail, detail_size, "output datatype differs from the input's");
    return 0;
  }
  uint64_t in_sum = 0, out_sum = 0;
  if (checksum(in, 0, memory_budget, &in_sum, err) ||
      checksum(out, 1, memory_budget, &out_sum, err))
    return -1;
  *match = in_sum == out_sum;
  snprintf(detail, detail_size, "checksums %016llx (input) and %016llx (output)",
           (unsigned long long)in_sum, (unsigned long long)out_sum);
  return 0;
}
