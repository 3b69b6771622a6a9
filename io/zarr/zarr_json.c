/* JSON text for Zarr's metadata (zarr_json.h). */
#include "zarr_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xio_json_init(xio_json *j) { memset(j, 0, sizeof *j); }

void xio_json_free(xio_json *j) {
  free(j->text);
  xio_json_init(j);
}

static void append(xio_json *j, const char *s, size_t n) {
  if (j->failed) return;
  if (j->length + n + 1 > j->room) {
    size_t room = j->room ? j->room : 256;
    while (room < j->length + n + 1) room *= 2;
    char *grown = realloc(j->text, room);
    if (!grown) {
      j->failed = 1;
      return;
    }
    j->text = grown, j->room = room;
  }
  memcpy(j->text + j->length, s, n);
  j->length += n;
  j->text[j->length] = '\0';
}

/* A value's comma, where one comes before it. */
static void begin_value(xio_json *j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->items[j->depth]++) append(j, ", ", 2);
}

void xio_json_open(xio_json *j, char bracket) {
  begin_value(j);
  append(j, &bracket, 1);
  if (j->depth + 1 >= XIO_JSON_DEPTH) {
    j->failed = 1;
    return;
  }
  j->items[++j->depth] = 0;
}

void xio_json_close(xio_json *j, char bracket) {
  if (j->depth > 0) j->depth--;
  append(j, &bracket, 1);
}

void xio_json_key(xio_json *j, const char *key) {
  xio_json_string(j, key);
  append(j, ": ", 2);
  j->after_key = 1;
}

void xio_json_string_n(xio_json *j, const char *s, size_t n) {
  begin_value(j);
  append(j, "\"", 1);
  for (size_t i = 0; i < n && s[i]; i++) {
    const unsigned char c = (unsigned char)s[i];
    char escaped[8];
    if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r') {
      escaped[0] = '\\', escaped[1] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : (char)c;
      append(j, escaped, 2);
    } else if (c < 0x20) {
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
      append(j, escaped, 6);
    } else {
      append(j, (const char *)&c, 1);
    }
  }
  append(j, "\"", 1);
}

void xio_json_string(xio_json *j, const char *s) { xio_json_string_n(j, s, strlen(s)); }

void xio_json_int(xio_json *j, int64_t v) {
  char text[32];
  begin_value(j);
  append(j, text, (size_t)snprintf(text, sizeof text, "%" PRId64, v));
}

void xio_json_uint(xio_json *j, uint64_t v) {
  char text[32];
  begin_value(j);
  append(j, text, (size_t)snprintf(text, sizeof text, "%" PRIu64, v));
}

void xio_json_double(xio_json *j, double v) {
  if (isnan(v) || isinf(v)) {
    xio_json_string(j, isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
    return;
  }
  char text[40];
  int n = 0;
  for (int digits = 1; digits <= 17; digits++) /* the shortest that reads back */
    if ((n = snprintf(text, sizeof text, "%.*g", digits, v)) > 0 && strtod(text, NULL) == v) break;
  /* a whole number stays a float in Python's and JavaScript's eyes alike */
  if (!strpbrk(text, ".eE")) memcpy(text + n, ".0", 3), n += 2;
  begin_value(j);
  append(j, text, (size_t)n);
}

void xio_json_float(xio_json *j, float v) {
  if (isnan(v) || isinf(v)) return xio_json_double(j, v);
  char text[40];
  int n = 0;
  for (int digits = 1; digits <= 9; digits++)
    if ((n = snprintf(text, sizeof text, "%.*g", digits, (double)v)) > 0 && strtof(text, NULL) == v)
      break;
  if (!strpbrk(text, ".eE")) memcpy(text + n, ".0", 3), n += 2;
  begin_value(j);
  append(j, text, (size_t)n);
}

void xio_json_null(xio_json *j) {
  begin_value(j);
  append(j, "null", 4);
}

void xio_json_bool(xio_json *j, int v) {
  begin_value(j);
  append(j, v ? "true" : "false", v ? 4 : 5);
}

void xio_json_raw(xio_json *j, const char *json) {
  begin_value(j);
  append(j, json, strlen(json));
}
