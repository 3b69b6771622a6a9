/* HDF5's Fletcher32 filter (codec.h). */
#include "codec.h"

/* HDF5's Fletcher32 (H5checksum.c): over 16-bit big-endian words, an odd
 * last byte as the high half of one. */
static uint32_t fletcher32(const unsigned char *data, size_t bytes) {
  uint32_t sum1 = 0, sum2 = 0;
  for (size_t words = bytes / 2; words;) {
    size_t run = words > 360 ? 360 : words; /* no overflow within a run */
    words -= run;
    do {
      sum1 += (uint32_t)(data[0] << 8 | data[1]);
      data += 2;
      sum2 += sum1;
    } while (--run);
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (bytes % 2) {
    sum1 += (uint32_t)(*data << 8);
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return sum2 << 16 | sum1;
}

/* Stored little-endian after the data; HDF5 before 1.6.3 wrote it with
 * the bytes of each half swapped, which HDF5 still accepts. */
static int fletcher32_matches(const unsigned char *data, size_t bytes) {
  const unsigned char *c = data + bytes;
  const uint32_t stored = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 |
                          (uint32_t)c[3] << 24,
                 sum = fletcher32(data, bytes);
  const uint32_t swapped = (sum & 0x00ff00ffu) << 8 | (sum & 0xff00ff00u) >> 8;
  return stored == sum || stored == swapped;
}

const xio_codec xio_codec_fletcher32 = {.id = H5Z_FILTER_FLETCHER32,
                                        .name = "fletcher32",
                                        .role = XIO_CODEC_CHECKSUM,
                                        .verb = "Fletcher32",
                                        .sum = fletcher32,
                                        .matches = fletcher32_matches};
