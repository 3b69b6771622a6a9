/* What a run's passes would cost per byte, measured on a sample before it
 * starts (xpose --plan): reading the input's values through HDF5
 * (inflating them where it is compressed), and writing them through the
 * output's filters (compressing them), with nothing written to storage. */
#ifndef XIO_SAMPLE_RATES_H
#define XIO_SAMPLE_RATES_H

#include "h5_matrix.h"

typedef struct {
  uint64_t bytes;     /* of the sample (0: none taken) */
  double read_rate;   /* bytes per second through HDF5's reads */
  double filter_rate; /* bytes per second through the output's filters; 0: it has none */
} xio_sample_rates;

/* Collective (every rank reads the same sample).  The sample: rows of
 * in's first matrix, in whole chunks, about 8 MiB where it has them, read
 * as the passes read them; then written into an HDF5 file in memory, in a
 * dataset of the output's filters and chunk size (`storage` and
 * `out_shape`, as xio_storage_apply takes them, in as its input). */
int xio_sample_rates_measure(const xio_matrix *in, const xio_storage *storage,
                             const xio_shape *out_shape, xio_sample_rates *rates, xio_error *err);

#endif
