/* A chunked dataset's v1 B-tree walked from the file (chunk_btree.h), as
 * HDF5's file format specification lays out object headers (versions 1
 * and 2), the data layout message (version 3) and v1 B-tree nodes of raw
 * data chunks (node type 1).  All numbers on file are little-endian. */
#define _POSIX_C_SOURCE 200809L /* pread */
#include "chunk_btree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunk_box.h"
#include "h5_compat.h"

enum {
  MSG_LAYOUT = 0x0008,
  MSG_CONTINUATION = 0x0010,
  MOST_BLOCKS = 64,  /* header blocks followed: more is not a header */
  MOST_LEVELS = 32,  /* of a B-tree: 2^32 chunks and more */
  MAX_AXES = 33,     /* HDF5's 32, and the element's */
  LAYOUT_CHUNKED = 2 /* the layout class */
};

typedef struct {
  int fd;
  uint64_t base;
  unsigned sa, ss; /* bytes of an address, of a length */
  const xio_chunk_places *places;
  int64_t found;
  uint64_t eof; /* the file's length less the base, or HDF5's end of
                 * allocation where less: no chunk lies past it */
  char *why;    /* what is damaged */
  size_t why_size;
} walk;

static uint64_t le(const unsigned char *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

/* n bytes at the HDF5 address addr into a new buffer (NULL: cannot). */
static unsigned char *read_at(const walk *w, uint64_t addr, size_t n) {
  unsigned char *buf = n && n < ((size_t)1 << 30) ? malloc(n) : NULL;
  for (size_t done = 0; buf && done < n;) {
    const ssize_t got = pread(w->fd, buf + done, n - done, (off_t)(w->base + addr + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      free(buf);
      return NULL;
    }
    done += (size_t)got;
  }
  return buf;
}

/* A header's blocks of messages, the first and its continuations. */
typedef struct {
  uint64_t addr[MOST_BLOCKS], length[MOST_BLOCKS];
  int count, version, creation_order; /* v2: messages carry their creation order */
} header_blocks;

/* Messages in block b: the layout's B-tree address and dimensionality
 * where found (1), continuations queued; 0 where not, -1 where malformed. */
static int scan_block(const walk *w, header_blocks *h, int b, uint64_t *tree, int *dims,
                      const int64_t *chunk_dims) {
  unsigned char *block = read_at(w, h->addr[b], (size_t)h->length[b]);
  if (!block) return -1;
  const int v1 = h->version == 1, signed_block = !v1 && b > 0; /* "OCHK", its checksum after */
  size_t at = signed_block ? 4 : 0, end = (size_t)h->length[b] - (signed_block ? 4 : 0);
  if (signed_block && (h->length[b] < 8 || memcmp(block, "OCHK", 4) != 0)) {
    free(block);
    return -1;
  }
  const size_t prefix = v1 ? 8 : 4 + (h->creation_order ? 2 : 0);
  int rc = 0;
  while (rc == 0 && at + prefix <= end) {
    const unsigned type = v1 ? (unsigned)le(block + at, 2) : block[at];
    const size_t size = (size_t)le(block + at + (v1 ? 2 : 1), 2);
    const unsigned char *m = block + at + prefix;
    if (at + prefix + size > end) break; /* a gap */
    if (type == MSG_CONTINUATION && size >= w->sa + w->ss) {
      if (h->count == MOST_BLOCKS)
        rc = -1;
      else
        h->addr[h->count] = le(m, w->sa), h->length[h->count++] = le(m + w->sa, w->ss);
    } else if (type == MSG_LAYOUT) {
      rc = -1;
      const int n = size >= 3 ? m[2] : 0;
      if (m[0] == 3 && m[1] == LAYOUT_CHUNKED && n >= 2 && n <= MAX_AXES &&
          size >= 3 + w->sa + 4 * (size_t)n && n - 1 == w->places->ndims) {
        *tree = le(m + 3, w->sa);
        *dims = n;
        rc = 1;
        for (int a = 0; a < n - 1; a++)
          if ((int64_t)le(m + 3 + w->sa + 4 * a, 4) != chunk_dims[a]) rc = -1;
      }
    }
    at += prefix + size;
  }
  free(block);
  return rc;
}

/* The B-tree's address and the keys' dimensionality, from dset's object
 * header at `header`.  0, or -1. */
static int find_layout(const walk *w, uint64_t header, uint64_t *tree, int *dims) {
  unsigned char *p = read_at(w, header, 32);
  if (!p) return -1;
  header_blocks h = {.count = 1};
  if (p[0] == 1) { /* version 1: 16 bytes of prefix, messages 8-byte aligned */
    h.version = 1;
    h.addr[0] = header + 16, h.length[0] = le(p + 8, 4);
  } else if (memcmp(p, "OHDR", 4) == 0 && p[4] == 2) {
    const unsigned flags = p[5];
    size_t at = 6 + (flags & 0x20 ? 16 : 0) + (flags & 0x10 ? 4 : 0);
    const unsigned width = 1u << (flags & 3);
    h.version = 2, h.creation_order = (flags & 0x04) != 0;
    h.addr[0] = header + at + width, h.length[0] = le(p + at, width);
  } else {
    h.count = 0;
  }
  free(p);
  int rc = h.count ? 0 : -1;
  for (int b = 0; rc == 0 && b < h.count; b++)
    rc = scan_block(w, &h, b, tree, dims, w->places->chunk);
  return rc == 1 ? 0 : -1;
}

/* What is damaged, and the node at `at` where it was found: -1. */
static int damaged(walk *w, const char *what, uint64_t at) {
  snprintf(w->why, w->why_size, "%s (the B-tree node at byte %llu)", what,
           (unsigned long long)(w->base + at));
  return -1;
}

/* One leaf record of the node at `node`: the chunk at the key's offset
 * (in values) lies at addr. */
static int record(walk *w, const unsigned char *key, int dims, uint64_t addr, uint64_t node) {
  const xio_chunk_places *c = w->places;
  int64_t index = 0;
  for (int a = 0; a < c->ndims; a++) {
    const uint64_t offset = le(key + 8 + 8 * (size_t)a, 8);
    if (offset % (uint64_t)c->chunk[a] || offset / (uint64_t)c->chunk[a] >= (uint64_t)c->grid[a])
      return damaged(w, "a chunk's key is off the chunk grid", node);
    index = index * c->grid[a] + (int64_t)(offset / (uint64_t)c->chunk[a]);
  }
  const uint64_t size = le(key, 4);
  if (le(key + 8 + 8 * (size_t)(dims - 1), 8) != 0)
    return damaged(w, "a chunk's key is off the chunk grid", node);
  if (size == 0 || c->size[index] != 0)
    return damaged(w, size ? "a chunk is listed twice" : "a chunk has no bytes", node);
  if (addr > w->eof || size > w->eof - addr)
    return damaged(w, "a chunk lies past the file's end", node);
  c->addr[index] = w->base + addr, c->size[index] = size;
  c->mask[index] = (unsigned)le(key + 4, 4);
  w->found++;
  return 0;
}

/* Keys' offsets compared as HDF5 orders them (lexicographically over
 * every axis, the element's last): <0, 0 or >0. */
static int key_cmp(const unsigned char *a, const unsigned char *b, int dims) {
  for (int i = 0; i < dims; i++) {
    const uint64_t x = le(a + 8 + 8 * (size_t)i, 8), y = le(b + 8 + 8 * (size_t)i, 8);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/* Whether a node's keys (entries + 1 of them) rise strictly and lie in
 * [lo, hi) of its parent (NULL: unbounded): as HDF5 finds a chunk by
 * descending the keys, every chunk walked is then one HDF5 finds too,
 * and a damaged tree is refused instead of read two ways. */
static int keys_in_order(const unsigned char *node, size_t entries, size_t stride, int dims,
                         const unsigned char *lo, const unsigned char *hi) {
  if (lo && key_cmp(node, lo, dims) < 0) return 0;
  if (hi && key_cmp(node + entries * stride, hi, dims) > 0) return 0;
  for (size_t i = 0; i < entries; i++)
    if (key_cmp(node + i * stride, node + (i + 1) * stride, dims) >= 0) return 0;
  return 1;
}

/* The node at addr, `level` levels above the leaves (-1: the root, any),
 * its keys within [lo, hi). */
static int walk_node(walk *w, uint64_t addr, int dims, int level, const unsigned char *lo,
                     const unsigned char *hi) {
  const size_t key = 8 + 8 * (size_t)dims, head = 8 + 2 * (size_t)w->sa;
  unsigned char *p = read_at(w, addr, head);
  const int ok = p && memcmp(p, "TREE", 4) == 0 && p[4] == 1 && p[5] < MOST_LEVELS &&
                 (level < 0 || p[5] == level);
  const int node_level = ok ? p[5] : 0;
  const size_t entries = ok ? (size_t)le(p + 6, 2) : 0;
  free(p);
  if (ok && entries == 0 && level < 0) return 0; /* an empty root: no chunk written */
  if (!ok || entries == 0) return damaged(w, "a node of the chunks' B-tree is none", addr);
  const size_t stride = key + w->sa;
  unsigned char *node = read_at(w, addr + head, entries * stride + key);
  int rc = !node ? damaged(w, "a node of the chunks' B-tree is cut short", addr)
           : !keys_in_order(node, entries, stride, dims, lo, hi)
               ? damaged(w, "the chunks' B-tree has keys out of order", addr)
               : 0;
  for (size_t i = 0; rc == 0 && i < entries; i++) {
    const unsigned char *k = node + i * stride;
    const uint64_t child = le(k + key, w->sa);
    rc = node_level ? walk_node(w, child, dims, node_level - 1, k, k + stride)
                    : record(w, k, dims, child, addr);
    if (rc == 0 && w->found > w->places->count)
      rc = damaged(w, "the chunks' B-tree lists more chunks than the dataset has", addr);
  }
  free(node);
  return rc;
}

int xio_superblock_eoa(int fd, uint64_t base, uint64_t *eoa, char *why, size_t why_size) {
  unsigned char sb[64];
  if (pread(fd, sb, sizeof sb, (off_t)base) != (ssize_t)sizeof sb ||
      memcmp(sb, "\211HDF\r\n\032\n", 8) != 0 || sb[8] > 3)
    return 0;
  const int old = sb[8] < 2; /* versions 0 and 1: sizes at 13, addresses from 24 (v1: 28) */
  const unsigned sa = old ? sb[13] : sb[9];
  const size_t at = old ? (sb[8] == 1 ? 28 : 24) : 12; /* the base address */
  if (sa < 2 || sa > 8 || at + 3 * (size_t)sa > sizeof sb) return 0;
  if (le(sb + at, sa) != base) {
    snprintf(why, why_size, "its superblock's base address %llu is not %llu, where it lies",
             (unsigned long long)le(sb + at, sa), (unsigned long long)base);
    return -1;
  }
  *eoa = le(sb + at + 2 * (size_t)sa, sa);
  return 1;
}

/* The file offset HDF5's addresses count from: its user block's size
 * (H5Dget_chunk_info's addresses are relative to it; 0 in most files). */
static int base_address(hid_t file, uint64_t *base) {
  const hid_t fcpl = H5Fget_create_plist(file);
  hsize_t userblock = 0;
  const int ok = fcpl >= 0 && H5Pget_userblock(fcpl, &userblock) >= 0;
  if (fcpl >= 0) (void)H5Pclose(fcpl); /* only read */
  *base = ok ? (uint64_t)userblock : UINT64_MAX;
  return ok;
}

int xio_chunk_btree_locate(int fd, hid_t file, hid_t dset, xio_chunk_places *places, char *why,
                           size_t why_size) {
  if (!base_address(file, &places->base)) return 0;
  if (xio_superblock_eoa(fd, places->base, &places->eoa, why, why_size) < 0) return -1;
  const int walked = xio_chunk_btree_walk(fd, file, dset, places, why, why_size);
  hsize_t counted = 0; /* HDF5's own count: the walk's, or the tree is read two ways */
  if (walked > 0 && H5Dget_num_chunks(dset, H5S_ALL, &counted) >= 0 &&
      counted != (hsize_t)places->count) {
    snprintf(why, why_size, "its B-tree lists %lld chunks, HDF5 counts %llu",
             (long long)places->count, (unsigned long long)counted);
    return -1;
  }
  return walked;
}

int xio_chunk_btree_agrees(hid_t dset, const xio_chunk_places *c) {
  const int64_t some[3] = {0, c->count / 2, c->count - 1};
  int agree = 1;
  for (int s = 0; s < 3; s++) {
    int64_t origin[MAX_AXES];
    hsize_t offset[MAX_AXES];
    xio_chunk_origin(c->ndims, c->chunk, c->grid, some[s], origin);
    for (int a = 0; a < c->ndims; a++) offset[a] = (hsize_t)origin[a];
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    const int64_t k = some[s];
    if (H5Dget_chunk_info_by_coord(dset, offset, &mask, &addr, &size) < 0 || addr == HADDR_UNDEF ||
        c->base + (uint64_t)addr != c->addr[k] || size != c->size[k] || mask != c->mask[k])
      agree = 0; /* asked on: every rank makes the same calls */
  }
  return agree;
}

int xio_chunk_btree_walk(int fd, hid_t file, hid_t dset, const xio_chunk_places *places, char *why,
                         size_t why_size) {
#if H5_VERSION_GE(1, 12, 0)
  (void)fd, (void)file, (void)dset, (void)places, (void)why, (void)why_size;
  return 0; /* object tokens, not addresses: HDF5 is asked */
#else
  walk w = {.fd = fd, .base = places->base, .places = places, .why = why, .why_size = why_size};
  size_t sa = 0, ss = 0;
  const hid_t fcpl = H5Fget_create_plist(file);
  const int sized =
      fcpl >= 0 && H5Pget_sizes(fcpl, &sa, &ss) >= 0 && sa >= 2 && sa <= 8 && ss >= 2 && ss <= 8;
  if (fcpl >= 0) (void)H5Pclose(fcpl); /* only read */
  xio_object_info info;
  if (!sized || places->ndims + 1 > MAX_AXES || XIO_OBJECT_INFO(dset, &info) < 0) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < places->base) return 0;
  w.sa = (unsigned)sa, w.ss = (unsigned)ss, w.eof = (uint64_t)st.st_size - places->base;
  if (places->eoa < w.eof) w.eof = places->eoa; /* HDF5 reads nothing past it */
  memset(places->size, 0, sizeof *places->size * (size_t)places->count);
  uint64_t tree = 0;
  int dims = 0;
  if (find_layout(&w, (uint64_t)info.addr, &tree, &dims) != 0) return 0; /* HDF5 is asked */
  if (tree == (w.sa == 8 ? UINT64_MAX : ((uint64_t)1 << 8 * w.sa) - 1))
    return 0; /* the undefined address: no chunk written yet */
  if (walk_node(&w, tree, dims, -1, NULL, NULL) != 0) return -1;
  return w.found == places->count; /* else chunks not written: HDF5 reads them */
#endif
}
