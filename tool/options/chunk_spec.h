/* --chunks: the output's chunks by dimension name, in nccopy -c's words
 * ("time/1461,lat/16,lon/16"). */
#ifndef TOOL_CHUNK_SPEC_H
#define TOOL_CHUNK_SPEC_H

#include <stddef.h>
#include <stdint.h>

/* Local.  0, or -1 with one line in error, for a spec that is not a
 * comma-separated list of NAME/LENGTH (LENGTH a whole number from 1 to
 * 2^32; NAME/ alone: the axis's whole length), each name once. */
int tool_chunk_spec_check(const char *spec, char *error, size_t error_size);

/* Local.  The spec's names alone, "time,lat,lon", as --dims gives names. */
void tool_chunk_spec_names(const char *spec, char *names, size_t size);

/* Local.  The chunk of a dataset whose axis i is named names[i] and is
 * lengths[i] long: the spec's length for each axis it names, the whole
 * axis for the others (nccopy's rule for a netCDF-3 input's). */
void tool_chunk_spec_apply(const char *spec, int ndims, const char *const *names,
                           const int64_t *lengths, int64_t *chunk);

#endif
