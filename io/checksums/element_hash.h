/* The hash of one element and its key that the checksums (checksum.h) sum,
 * written once for the host (checksum.c) and the GPU
 * (cuda/io/checksum_cuda.cu): both include this, so their sums agree by
 * construction.  Plain C that nvcc compiles for both sides; no CUDA header. */
#ifndef XIO_ELEMENT_HASH_H
#define XIO_ELEMENT_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define XIO_HASH_FN __host__ __device__ static inline
#else
#define XIO_HASH_FN static inline
#endif

/* An odd multiplier that spreads a key (key 0 is not special: key + 1 is
 * spread), and the one that mixes. */
#define XIO_KEY_SPREAD 0x9e3779b97f4a7c15ull
#define XIO_WORD_MIX 0xd6e8feb86659fd93ull

/* A 64-bit finalizer (xor-shift, multiply, xor-shift): every input bit
 * reaches every output bit, at a few cycles per element. */
XIO_HASH_FN uint64_t xio_hash_mix(uint64_t h) {
  h ^= h >> 32;
  h *= XIO_WORD_MIX;
  h ^= h >> 32;
  h *= XIO_WORD_MIX;
  h ^= h >> 32;
  return h;
}

/* Elements of up to 8 bytes, the common case, in one multiply: the key,
 * spread (stepped by addition along a row), xored with the element
 * zero-extended, mixed by a multiply and a shift.  For a fixed key this is
 * a bijection of the element, so any single changed element changes the
 * sum. */
XIO_HASH_FN uint64_t xio_word_hash(uint64_t word, uint64_t spread_key) {
  const uint64_t h = (word ^ spread_key) * XIO_WORD_MIX;
  return h ^ (h >> 32);
}

/* Other sizes: the element's 8-byte words (little-endian), one after the
 * other, the last one's length mixed in. */
XIO_HASH_FN uint64_t xio_element_hash(const unsigned char *p, size_t size, uint64_t key) {
  uint64_t h = (key + 1) * XIO_KEY_SPREAD;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    memcpy(&word, p + i, 8);
    h = xio_hash_mix(h ^ word);
  }
  if (i < size) {
    uint64_t word = 0;
    memcpy(&word, p + i, size - i);
    h = xio_hash_mix(h ^ word ^ ((uint64_t)(size - i) << 59));
  }
  return h;
}

#endif
