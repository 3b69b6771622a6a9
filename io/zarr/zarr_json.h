/* JSON text built up for Zarr's metadata: objects and arrays nested,
 * commas placed, strings escaped, numbers that read back exactly. */
#ifndef XIO_ZARR_JSON_H
#define XIO_ZARR_JSON_H

#include <stddef.h>
#include <stdint.h>

enum { XIO_JSON_DEPTH = 16 };

typedef struct {
  char *text; /* NUL-terminated; malloc'd */
  size_t length, room;
  int failed; /* out of memory, or nested too deep: text is of no use */
  int depth;
  int items[XIO_JSON_DEPTH]; /* values so far at each depth */
  int after_key;             /* a key was written: its value comes next */
} xio_json;

void xio_json_init(xio_json *j);
void xio_json_free(xio_json *j);

/* '{' or '[' opened, '}' or ']' closed. */
void xio_json_open(xio_json *j, char bracket);
void xio_json_close(xio_json *j, char bracket);

/* A key of the object open: its value follows. */
void xio_json_key(xio_json *j, const char *key);

void xio_json_string(xio_json *j, const char *s);
void xio_json_string_n(xio_json *j, const char *s, size_t n); /* stops at a NUL */
void xio_json_int(xio_json *j, int64_t v);
void xio_json_uint(xio_json *j, uint64_t v);
/* The shortest that reads back as v; NaN and the infinities as Zarr
 * writes them in metadata: "NaN", "Infinity", "-Infinity". */
void xio_json_double(xio_json *j, double v);
/* A float32 value, the shortest that reads back as it. */
void xio_json_float(xio_json *j, float v);
void xio_json_null(xio_json *j);
void xio_json_bool(xio_json *j, int v);
/* Text that is JSON already (a value). */
void xio_json_raw(xio_json *j, const char *json);

#endif
