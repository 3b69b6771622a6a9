/* Parsing and printing byte sizes and counts for the command line. */
#ifndef TOOL_SIZE_H
#define TOOL_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* "4096", "512K", "1.5G", "2GiB", "64MB", "1T": a number with an optional
 * fraction and an optional unit K, M, G, T (powers of 1024, as Slurm and
 * most HPC tools read them; KB/KiB and friends mean the same; B is bytes).
 * Returns 0 and sets *bytes, or -1 for anything malformed, zero or
 * overflowing 64 bits. */
int tool_parse_size(const char *text, uint64_t *bytes);

/* A positive decimal integer up to INT64_MAX, nothing else.  0 or -1. */
int tool_parse_count(const char *text, int64_t *value);

/* "1.50 GiB", "512 B". */
void tool_format_bytes(uint64_t bytes, char *text, size_t text_size);

#endif
