/* A netCDF-3 header read and checked (netcdf3.h): the layout of the
 * format's specification, every count and length bounded by the bytes
 * the file holds, every name one netCDF accepts, every variable inside
 * the file.  netCDF-C reads only headers that pass: it trusts what it
 * reads, and a damaged count crashes it or keeps it reading for hours. */
#define _POSIX_C_SOURCE 200809L /* fseeko */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "netcdf3.h"

enum { TAG_DIMENSION = 0x0A, TAG_VARIABLE = 0x0B, TAG_ATTRIBUTE = 0x0C };
enum { MAX_NAME = 256 }; /* NC_MAX_NAME */
/* The fewest bytes one entry of a list takes (name length, a name of one
 * byte padded to four, and the entry's fixed fields), which bounds how
 * many a file of its size can hold. */
enum { MIN_DIMENSION = 12, MIN_ATTRIBUTE = 16, MIN_VARIABLE = 32 };

/* The header, read in order; the first thing found wrong is kept in why,
 * and every read after it fails. */
typedef struct {
  FILE *f;
  int version;       /* 1 classic, 2 64-bit offset, 5 CDF-5 */
  uint64_t at, size; /* bytes read, bytes in the file */
  char why[200];
} header;

static int wrong(header *h, const char *format, ...) XIO_PRINTF(2, 3);
static int wrong(header *h, const char *format, ...) {
  if (!h->why[0]) {
    va_list args;
    va_start(args, format);
    vsnprintf(h->why, sizeof h->why, format, args);
    va_end(args);
  }
  return -1;
}

static int read_bytes(header *h, void *to, uint64_t bytes) {
  if (h->why[0]) return -1;
  if (bytes > h->size - h->at || fread(to, 1, (size_t)bytes, h->f) != bytes)
    return wrong(h, "the file ends inside its header");
  h->at += bytes;
  return 0;
}

static int skip(header *h, uint64_t bytes) {
  if (h->why[0]) return -1;
  if (bytes > h->size - h->at || fseeko(h->f, (off_t)bytes, SEEK_CUR) != 0)
    return wrong(h, "the file ends inside its header");
  h->at += bytes;
  return 0;
}

static uint64_t padding(uint64_t bytes) { return (4 - bytes % 4) % 4; }

/* A big-endian unsigned integer of 4 or 8 bytes (0 once anything failed). */
static uint64_t get(header *h, int bytes) {
  unsigned char b[8];
  uint64_t v = 0;
  if (read_bytes(h, b, (uint64_t)bytes)) return 0;
  for (int i = 0; i < bytes; i++) v = v << 8 | b[i];
  return v;
}

/* NON_NEG: 8 bytes in CDF-5, otherwise a non-negative 4-byte INT. */
static uint64_t get_non_neg(header *h, const char *what) {
  const uint64_t v = get(h, h->version == 5 ? 8 : 4);
  if (v > (h->version == 5 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX))
    wrong(h, "%s is %llu", what, (unsigned long long)v);
  return h->why[0] ? 0 : v;
}

/* A count of entries of at least `each` bytes: no more than the rest of
 * the file holds. */
static uint64_t get_count(header *h, const char *what, uint64_t each) {
  const uint64_t n = get_non_neg(h, what);
  if (!h->why[0] && n > (h->size - h->at) / each)
    wrong(h, "%s is %llu, more than its %llu bytes hold", what, (unsigned long long)n,
          (unsigned long long)h->size);
  return h->why[0] ? 0 : n;
}

/* netCDF's rule for names (netCDF-C's NC_check_name): UTF-8; the first
 * character a letter, digit, '_' or not ASCII; no control character, no
 * '/'; no trailing space. */
static int utf8_sequence(const unsigned char *s, size_t left) {
  const int n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
  if (n == 0 || (size_t)n > left) return 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if ((n == 3 && s[0] == 0xE0 && s[1] < 0xA0) || (n == 3 && s[0] == 0xED && s[1] >= 0xA0) ||
      (n == 4 && s[0] == 0xF0 && s[1] < 0x90) || (n == 4 && s[0] == 0xF4 && s[1] >= 0x90))
    return 0; /* overlong, a surrogate, past U+10FFFF */
  return n;
}

static int valid_name(const unsigned char *s, size_t length) {
  for (size_t i = 0; i < length;) {
    const unsigned char c = s[i];
    if (c >= 0x80) {
      const int n = utf8_sequence(s + i, length - i);
      if (n == 0) return 0;
      i += (size_t)n;
      continue;
    }
    const int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (i == 0 ? !alnum && c != '_' : c < 0x20 || c == 0x7F || c == '/') return 0;
    if (i == length - 1 && (c == ' ' || (c >= '\t' && c <= '\r'))) return 0;
    i++;
  }
  return length > 0;
}

static int get_name(header *h, const char *kind, char name[MAX_NAME + 1]) {
  const uint64_t length = get_non_neg(h, "a name's length");
  name[0] = '\0';
  if (h->why[0]) return -1;
  if (length == 0 || length > MAX_NAME)
    return wrong(h, "%s name of %llu bytes", kind, (unsigned long long)length);
  if (read_bytes(h, name, length) || skip(h, padding(length))) return -1;
  name[length] = '\0';
  if (!valid_name((const unsigned char *)name, (size_t)length))
    return wrong(h, "%s name is not a valid netCDF name", kind);
  return 0;
}

/* Names of a list, grown as they are read (a damaged count must not
 * allocate what the file does not hold). */
typedef struct {
  char (*name)[MAX_NAME + 1];
  uint64_t n, capacity;
} name_list;

static char *next_name(header *h, name_list *l) {
  if (l->n == l->capacity) {
    const uint64_t capacity = l->capacity ? 2 * l->capacity : 16;
    void *grown = realloc(l->name, (size_t)capacity * sizeof *l->name);
    if (!grown) return wrong(h, "out of memory reading the header"), NULL;
    l->name = grown;
    l->capacity = capacity;
  }
  return l->name[l->n++];
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

/* The first name given twice in l (NULL: none); l is reordered. */
static const char *repeated(name_list *l) {
  if (l->n > 1) qsort(l->name, (size_t)l->n, sizeof *l->name, by_name);
  for (uint64_t i = 1; i < l->n; i++)
    if (strcmp(l->name[i - 1], l->name[i]) == 0) return l->name[i];
  return NULL;
}

/* Bytes of one value of nc_type t (NC_BYTE .. NC_DOUBLE, and in CDF-5 the
 * unsigned and 64-bit types up to NC_UINT64); 0 for no type of the file's
 * version. */
static size_t type_size(const header *h, uint64_t t) {
  static const size_t sizes[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
  const uint64_t last = h->version == 5 ? 11 : 6;
  return t >= 1 && t <= last ? sizes[t] : 0;
}

/* A list's tag and count: 0 for ABSENT (two zeros). */
static uint64_t list_of(header *h, uint64_t tag, const char *what, uint64_t each) {
  char count_of[400];
  snprintf(count_of, sizeof count_of, "the number of %s", what);
  const uint64_t found = get(h, 4);
  const uint64_t count = get_count(h, count_of, each);
  if (!h->why[0] && found != tag && !(found == 0 && count == 0))
    wrong(h, "no list of %s where one belongs", what);
  return h->why[0] ? 0 : count;
}

static int skip_attributes(header *h, const char *owner) {
  char what[300];
  snprintf(what, sizeof what, "attributes of %s", owner);
  name_list names = {0};
  const uint64_t n = list_of(h, TAG_ATTRIBUTE, what, MIN_ATTRIBUTE);
  for (uint64_t i = 0; i < n && !h->why[0]; i++) {
    char *name = next_name(h, &names);
    if (!name || get_name(h, "an attribute", name)) break;
    const uint64_t t = get(h, 4);
    const size_t size = type_size(h, t);
    if (size == 0 && !h->why[0])
      wrong(h, "attribute %s of %s has type %llu", name, owner, (unsigned long long)t);
    const uint64_t values = get_count(h, "an attribute's length", size ? size : 1);
    skip(h, values * size + padding(values * size));
  }
  const char *twice = h->why[0] ? NULL : repeated(&names);
  if (twice) wrong(h, "%s has two attributes named %s", owner, twice);
  free(names.name);
  return h->why[0] ? -1 : 0;
}

/* The dimensions' lengths, -1 for the record dimension (length 0). */
static int64_t *read_dimensions(header *h, uint64_t *ndims) {
  name_list names = {0};
  const uint64_t n = list_of(h, TAG_DIMENSION, "dimensions", MIN_DIMENSION);
  int64_t *length = h->why[0] ? NULL : calloc((size_t)n + 1, sizeof *length);
  int records = 0;
  if (!length) wrong(h, "out of memory reading the header");
  for (uint64_t d = 0; d < n && !h->why[0]; d++) {
    char *name = next_name(h, &names);
    if (!name || get_name(h, "a dimension", name)) break;
    const uint64_t value = get_non_neg(h, "a dimension's length");
    length[d] = value == 0 ? -1 : (int64_t)value;
    if (value == 0 && ++records > 1) wrong(h, "a second record (unlimited) dimension, %s", name);
  }
  const char *twice = h->why[0] ? NULL : repeated(&names);
  if (twice) wrong(h, "two dimensions named %s", twice);
  free(names.name);
  if (h->why[0]) free(length);
  *ndims = n;
  return h->why[0] ? NULL : length;
}

static int read_variable(header *h, const int64_t *dim_length, uint64_t ndims, xio_nc3_var *v) {
  if (get_name(h, "a variable", v->name)) return -1;
  const uint64_t rank = get_count(h, "a variable's number of dimensions", 4);
  if (rank > XIO_MAX_DIMS && !h->why[0])
    return wrong(h, "variable %s has %llu dimensions, more than the %d xpose reads", v->name,
                 (unsigned long long)rank, XIO_MAX_DIMS);
  v->ndims = (int)rank;
  for (int d = 0; d < v->ndims && !h->why[0]; d++) {
    const uint64_t id = get_non_neg(h, "a dimension's number");
    if (id >= ndims && !h->why[0])
      return wrong(h, "variable %s refers to dimension %llu where the file has %llu", v->name,
                   (unsigned long long)id, (unsigned long long)ndims);
    v->dims[d] = dim_length[id];
    if (dim_length[id] < 0 && d > 0)
      return wrong(h, "variable %s has the record dimension as an axis other than its first",
                   v->name);
    v->record |= dim_length[id] < 0;
  }
  if (skip_attributes(h, v->name)) return -1;
  const uint64_t t = get(h, 4);
  v->type_size = type_size(h, t);
  if (v->type_size == 0 && !h->why[0])
    return wrong(h, "variable %s has type %llu", v->name, (unsigned long long)t);
  (void)get(h, h->version == 5 ? 8 : 4); /* vsize: not to be trusted past 4 GiB, computed below */
  v->begin = get(h, h->version == 1 ? 4 : 8);
  return h->why[0] ? -1 : 0;
}

static int read_variables(header *h, const int64_t *dim_length, uint64_t ndims, xio_nc3_layout *l) {
  const uint64_t n = list_of(h, TAG_VARIABLE, "variables", MIN_VARIABLE);
  uint64_t capacity = 0;
  for (uint64_t i = 0; i < n && !h->why[0]; i++) {
    if (i == capacity) {
      capacity = capacity ? 2 * capacity : 16;
      void *grown = realloc(l->vars, (size_t)capacity * sizeof *l->vars);
      if (!grown) return wrong(h, "out of memory reading the header");
      l->vars = grown;
    }
    memset(&l->vars[i], 0, sizeof l->vars[i]);
    l->nvars++;
    if (read_variable(h, dim_length, ndims, &l->vars[i])) return -1;
  }
  for (int i = 0; i < l->nvars && !h->why[0]; i++)
    if (l->vars[i].begin < h->at)
      return wrong(h, "variable %s begins inside the header", l->vars[i].name);
  name_list names = {0};
  for (int i = 0; i < l->nvars && !h->why[0]; i++) {
    char *name = next_name(h, &names);
    if (name) strcpy(name, l->vars[i].name);
  }
  const char *twice = h->why[0] ? NULL : repeated(&names);
  if (twice) wrong(h, "two variables named %s", twice);
  free(names.name);
  return h->why[0] ? -1 : 0;
}

/* Bytes of one record of v (of all of v where it has no records);
 * UINT64_MAX where that overflows. */
static uint64_t slab_bytes(const xio_nc3_var *v) {
  uint64_t bytes = v->type_size;
  for (int d = v->record; d < v->ndims; d++)
    if (__builtin_mul_overflow(bytes, (uint64_t)v->dims[d], &bytes)) return UINT64_MAX;
  return bytes;
}

/* The records' stride (the specification's recsize: each record
 * variable's slab padded to 4 bytes, but a lone one's not padded), the
 * record dimension's length set, and every variable checked to lie within
 * the file. */
static int place_records(xio_nc3_layout *l, uint64_t file_bytes, const char *path, xio_error *err) {
  int record_vars = 0;
  uint64_t stride = 0, lone = 0;
  for (int i = 0; i < l->nvars; i++) {
    xio_nc3_var *v = &l->vars[i];
    v->slab_bytes = slab_bytes(v);
    if (!v->record) continue;
    record_vars++;
    lone = v->slab_bytes;
    if (__builtin_add_overflow(stride, (lone + 3) / 4 * 4, &stride)) stride = UINT64_MAX;
  }
  l->record_bytes = record_vars == 1 ? lone : stride;
  uint64_t records_begin = UINT64_MAX;
  for (int i = 0; i < l->nvars; i++)
    if (l->vars[i].record && l->vars[i].begin < records_begin) records_begin = l->vars[i].begin;
  for (int i = 0; i < l->nvars; i++) {
    xio_nc3_var *v = &l->vars[i];
    if (v->record) v->dims[0] = l->records;
    uint64_t span = v->slab_bytes, before = 0; /* the records before the last */
    if (v->record && l->records == 0) span = 0;
    const int overflows =
        span == UINT64_MAX ||
        (v->record && l->records > 0 &&
         (__builtin_mul_overflow((uint64_t)(l->records - 1), l->record_bytes, &before) ||
          __builtin_add_overflow(span, before, &span)));
    if (overflows || (span > 0 && (v->begin > file_bytes || span > file_bytes - v->begin)))
      return xio_fail(err,
                      "%s: variable %s lies past the file's end (%llu bytes): the file is "
                      "truncated, damaged or still being written",
                      path, v->name, (unsigned long long)file_bytes);
    if (!v->record && (v->begin > records_begin || span > records_begin - v->begin))
      return xio_fail(err,
                      "%s: its netCDF-3 header is damaged: variable %s is not before the records",
                      path, v->name);
  }
  return 0;
}

static int read_header(header *h, xio_nc3_layout *l) {
  unsigned char magic[4];
  if (read_bytes(h, magic, 4) || memcmp(magic, "CDF", 3) != 0 ||
      (magic[3] != 1 && magic[3] != 2 && magic[3] != 5))
    return -1; /* told apart by the caller */
  h->version = l->version = magic[3];
  const uint64_t numrecs = get(h, h->version == 5 ? 8 : 4);
  if (numrecs == (h->version == 5 ? UINT64_MAX : 0xFFFFFFFFu)) return 1;
  if (numrecs > (h->version == 5 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX))
    return wrong(h, "its number of records is %llu", (unsigned long long)numrecs);
  l->records = (int64_t)numrecs;
  uint64_t ndims = 0;
  int64_t *dim_length = read_dimensions(h, &ndims);
  const int rc =
      !dim_length || skip_attributes(h, "the file") || read_variables(h, dim_length, ndims, l) ? -1
                                                                                               : 0;
  free(dim_length);
  return rc;
}

int xio_nc3_layout_read(const char *path, xio_nc3_layout *l, xio_error *err) {
  memset(l, 0, sizeof *l);
  header h = {fopen(path, "rb"), 0, 0, 0, ""};
  struct stat st;
  if (!h.f || fstat(fileno(h.f), &st) != 0) {
    const int rc = xio_fail(err, "%s: %s", path, strerror(errno));
    if (h.f) fclose(h.f);
    return rc;
  }
  h.size = (uint64_t)st.st_size;
  const int read = read_header(&h, l);
  fclose(h.f);
  int rc = 0;
  if (read < 0 && l->version == 0)
    rc = xio_fail(err, "%s is not a netCDF-3 file", path);
  else if (read < 0)
    rc = xio_fail(err, "%s: its netCDF-3 header is damaged (byte %llu): %s", path,
                  (unsigned long long)h.at, h.why);
  else if (read > 0)
    rc = xio_fail(err,
                  "%s: its number of records is not set (a file being written in streaming "
                  "mode): close it in the program that writes it first",
                  path);
  else
    rc = place_records(l, h.size, path, err);
  if (rc) xio_nc3_layout_free(l);
  return rc;
}

void xio_nc3_layout_free(xio_nc3_layout *l) {
  free(l->vars);
  memset(l, 0, sizeof *l);
}

int xio_nc3_header_check(const char *path, xio_error *err) {
  xio_nc3_layout l;
  if (xio_nc3_layout_read(path, &l, err)) return -1;
  xio_nc3_layout_free(&l);
  return 0;
}

int xio_nc3_signature(const char *path) {
  unsigned char magic[4] = {0};
  FILE *f = fopen(path, "rb");
  const size_t got = f ? fread(magic, 1, sizeof magic, f) : 0;
  if (f) fclose(f);
  return got == 4 && memcmp(magic, "CDF", 3) == 0 ? magic[3] : -1;
}
