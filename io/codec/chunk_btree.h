/* Where every chunk of a dataset lies, read in one walk of its v1 B-tree
 * (the chunk index of files in HDF5's 1.8 format: netCDF-4's, h5py's).
 *
 * Why: HDF5 1.10 has no call that lists a dataset's chunks; each
 * H5Dget_chunk_info_by_coord walks the index from its start to the chunk
 * asked for, so locating n chunks takes n^2 / 2 steps (an hourly year's
 * 8760: 0.41 s; a decade's would take 40 s).  The walk reads the object
 * header and the tree's nodes as the file format specifies them and
 * checks what it finds: every chunk of the grid exactly once, and a few
 * against HDF5's own answer.  Anything else (another index, another
 * format version, HDF5 1.12 or later) leaves the chunks to HDF5's calls. */
#ifndef XIO_CHUNK_BTREE_H
#define XIO_CHUNK_BTREE_H

#include <hdf5.h>
#include <stdint.h>

/* The chunks sought: a grid of `count` chunks, each chunk[a] values
 * along axis a (ndims axes), row-major over the grid; each one's file
 * offset (from the file's first byte, `base` being where HDF5's addresses
 * count from), stored size and filter mask come back. */
typedef struct {
  int ndims;
  const int64_t *chunk, *grid;
  int64_t count;
  uint64_t base, eoa; /* eoa: xio_superblock_eoa's */
  uint64_t *addr, *size;
  unsigned *mask;
} xio_chunk_places;

/* Local.  The superblock of the file open as fd, at `base` (its user
 * block's size): 1 with its end of allocation (in *eoa, counted from
 * base: HDF5 reads nothing past it); 0 where it is not one read here;
 * -1 where it is damaged, with what in `why` (a base address that is not
 * the user block's size: HDF5 would read every address elsewhere). */
int xio_superblock_eoa(int fd, uint64_t base, uint64_t *eoa, char *why, size_t why_size);

/* Local.  1 where dset's chunks were all found so (read from fd, the
 * file `file` open read-only), 0 where HDF5 must be asked (another index,
 * a header not read here, chunks not all written), -1 where its B-tree is
 * damaged (a node that is none, keys out of order, a chunk off the grid,
 * twice, or past the file's end), with what in `why`: HDF5 reads such a
 * tree one way and finds its chunks another (a chunk H5Dread misses where
 * H5Dget_chunk_info finds it), so no reading of it can be trusted. */
int xio_chunk_btree_walk(int fd, hid_t file, hid_t dset, const xio_chunk_places *places, char *why,
                         size_t why_size);

/* Collective where HDF5's metadata reads are: whether HDF5 places a few
 * of the chunks walked (the first, the last, one between) where the walk
 * did; every rank makes the same calls. */
int xio_chunk_btree_agrees(hid_t dset, const xio_chunk_places *places);

/* Local.  The walk, its file's superblock first (places->base set to its
 * user block's size, UINT64_MAX where HDF5 cannot say; places->eoa from
 * the superblock) and HDF5's count of the chunks after:
 * xio_chunk_btree_walk's 1, 0 or -1, -1 too where the superblock or the
 * count says the file is damaged (why says how). */
int xio_chunk_btree_locate(int fd, hid_t file, hid_t dset, xio_chunk_places *places, char *why,
                           size_t why_size);

#endif
