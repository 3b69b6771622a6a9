/* CRC-32C (Castagnoli), as Zarr v3's crc32c codec appends it, and its
 * entry (codec.h); the shards' indexes are sealed with it too (shard.h). */
#ifndef XIO_CRC32C_H
#define XIO_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t xio_crc32c(const void *data, size_t bytes);

/* Whether data[0, bytes) is followed by its crc32c, little-endian. */
int xio_crc32c_matches(const void *data, size_t bytes);

#endif
