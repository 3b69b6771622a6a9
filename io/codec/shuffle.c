/* HDF5's shuffle filter, numcodecs' shuffle (codec.h). */
#include <string.h>

#include "codec.h"

/* Values of `size` bytes, a constant where inlined: the compiler then
 * vectorizes across the byte planes (float32 unshuffled at 14 times the
 * general loop's rate, one core of the 2-core VM). */
static inline void shuffle_sized(const unsigned char *restrict in, unsigned char *restrict out,
                                 size_t values, size_t size, int undo) {
  if (undo)
    for (size_t i = 0; i < values; i++)
      for (size_t j = 0; j < size; j++) out[i * size + j] = in[j * values + i];
  else
    for (size_t i = 0; i < values; i++)
      for (size_t j = 0; j < size; j++) out[j * values + i] = in[i * size + j];
}

/* HDF5's shuffle (H5Zshuffle.c): byte j of value i goes to j * values + i;
 * bytes past the last whole value stay where they are; one value, or
 * one-byte values, stay as they are. */
static void shuffle(const unsigned char *in, unsigned char *out, size_t bytes, size_t size,
                    int undo) {
  const size_t values = bytes / size;
  if (size <= 1 || values <= 1) {
    memcpy(out, in, bytes);
    return;
  }
  switch (size) {
    case 2: shuffle_sized(in, out, values, 2, undo); break;
    case 4: shuffle_sized(in, out, values, 4, undo); break;
    case 8: shuffle_sized(in, out, values, 8, undo); break;
    default: /* 64 values at a time, so that every byte plane's run stays in cache */
      for (size_t i0 = 0; i0 < values; i0 += 64) {
        const size_t i1 = i0 + 64 < values ? i0 + 64 : values;
        for (size_t j = 0; j < size; j++)
          if (undo)
            for (size_t i = i0; i < i1; i++) out[i * size + j] = in[j * values + i];
          else
            for (size_t i = i0; i < i1; i++) out[j * values + i] = in[i * size + j];
      }
  }
  memcpy(out + values * size, in + values * size, bytes - values * size);
}

const xio_codec xio_codec_shuffle = {.id = H5Z_FILTER_SHUFFLE,
                                     .name = "shuffle",
                                     .zarr_v2 = "shuffle",
                                     .role = XIO_CODEC_TRANSFORM,
                                     .settings = XIO_SETTINGS_ELEMENT_SIZE,
                                     .least_level = 1,
                                     .most_level = 16,
                                     .default_level = 4,
                                     .transform = shuffle};
