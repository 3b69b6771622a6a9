/* An HDF5 dataset of any number of axes, folded into the matrices the
 * passes move (shape.h), opened for collective MPI-IO, elements as raw
 * bytes.  Every function is collective over the matrix's communicator and
 * returns 0, or -1 on every rank with one message in err, unless it says
 * otherwise. */
#ifndef XIO_MATRIX_H
#define XIO_MATRIX_H

#include <hdf5.h>
#include <stdint.h>

#include "h5_error.h"
#include "h5_storage.h"
#include "shape.h"

/* Largest single transfer per rank per call: keeps every MPI-IO count well
 * inside int range whatever the budget. */
#define XIO_MAX_TRANSFER_BYTES ((uint64_t)1 << 30)

struct xio_block_source;

typedef struct xio_matrix {
  MPI_Comm comm; /* not owned */
  hid_t file, dset;
  hid_t type; /* transient copy of the dataset's datatype: the memory type too, so no conversion */
  xio_shape shape;
  size_t type_size; /* of one value of `type` */
  /* Of the folded matrix (xio_matrix_fold): the items' matrices stacked,
   * each rows / items x cols, transposed one by one (an empty matrix is
   * one item). */
  int64_t rows, cols, items;
  size_t elem_size;    /* type_size times the values of the axes inside an element */
  int chunked;         /* read independently: see transfer_block */
  int filtered;        /* chunked, with filters (compression) */
  int codec;           /* filtered, and the chunk codec can write its chunks */
  char codec_why[128]; /* filtered, not codec: what HDF5's pipeline runs instead */
  /* codec: the work buffers a thread encodes a chunk with, given it
   * shuffled where the first filter shuffles (filters.h) */
  uint64_t codec_work;
  int64_t chunk_dims[XIO_MAX_DIMS]; /* chunked: the chunk shape */
  /* Compressed and open read-only: its chunks, read raw once indexed
   * (chunk_reader.h); shared by copies of m, freed by xio_close. */
  struct xio_chunk_index *chunk_index;
  /* A netCDF-3 input's view (netcdf3_view.h): its values, read from the
   * netCDF-3 file itself (netcdf3.h); owned, freed by xio_close. */
  struct xio_nc3_source *netcdf3;
  /* Values read from elsewhere by a layer above (several inputs joined:
   * join_source.h); owned, freed by xio_close. */
  struct xio_block_source *source;
  /* A Zarr array (matrix_zarr.h): its chunks are files each rank writes
   * (chunk_writer.h), read back through chunk_index; file and dset are
   * invalid.  Owned, freed by xio_close. */
  struct xio_zarr_matrix *zarr;
  const struct xio_chunk_files *files; /* zarr's */
  /* xio_describe_storage's words for a matrix of another kind (a Zarr
   * array's: matrix_zarr.c), NULL for an HDF5 dataset */
  void (*describe)(const struct xio_matrix *m, char *text, size_t size);
  /* chunked: the rows (of an item's matrix) and columns a pass must start
   * and end on to cover whole chunks (the whole group where no shorter run
   * does) */
  int64_t chunk_rows, chunk_cols;
  /* The file is open on rank 0 alone, for its one writer (h5_one_writer.h):
   * file and dset are invalid on the other ranks. */
  int one_writer;
  char dataset[512]; /* path inside the file */
} xio_matrix;

/* Where a matrix's values come from when not from its dataset: `read`
 * fills buf with the block as xio_read_block does (local: the caller
 * agrees), `free` releases `state`; `prepare` (or NULL), collective,
 * readies the reads of the passes, and may set `alone`: from then on
 * they call no HDF5, and may run beside the writes (xio_reads_alone). */
typedef struct xio_block_source {
  int (*read)(void *state, const xio_matrix *m, int64_t row, int64_t nrows, int64_t col,
              int64_t ncols, void *buf, xio_error *err);
  void (*free)(void *state);
  int (*prepare)(struct xio_block_source *source, const xio_matrix *m, xio_error *err);
  void *state;
  int alone;
} xio_block_source;

/* NULL is accepted. */
void xio_source_free(xio_block_source *source);

/* Local.  Folds m at lead, split, trail (see xio_shape), setting rows,
 * cols, items, elem_size and the chunk units; a lead order set before
 * stays.  -1 with a message when 0 <= lead < split < trail <= ndims does
 * not hold, a lead order is not one of the leading axes, or a size passes
 * 64 bits. */
int xio_matrix_fold(xio_matrix *m, int lead, int split, int trail, xio_error *err);

/* The rows of one item's matrix. */
static inline int64_t xio_item_rows(const xio_matrix *m) { return m->rows / m->items; }

/* Local.  Folds `out` as the transpose of `in` (folded) is: -1 with a
 * message naming both shapes when out's axes are not in's moved so. */
int xio_matrix_fold_as_transpose(xio_matrix *out, const xio_matrix *in, xio_error *err);

/* Local.  Whether out's folded matrix is the shape of in's transpose
 * (item by item; rechunking, of in), or both are empty. */
int xio_matrix_transposes(const xio_matrix *out, const xio_matrix *in);

/* Marks m as not open, so that xio_close(m) does nothing. */
void xio_matrix_reset(xio_matrix *m);

/* For the parts of this module (matrix_output.c): m emptied for comm;
 * m's layout, chunk shape and filters taken from creation properties
 * dcpl; m's dataset closed, its file and communicator kept. */
void xio_matrix_init(xio_matrix *m, MPI_Comm comm);
int xio_matrix_take_storage(xio_matrix *m, hid_t dcpl, const char *shown, xio_error *err);
int xio_matrix_drop_dataset(xio_matrix *m, xio_error *err);

/* Opens path's dataset read-only (the tools choose it: input_dataset.h).
 * Fails on a missing or non-HDF5 file, a missing dataset, one with fewer
 * than 2 axes, and datatypes with variable-length data or references.  It
 * is folded at 0, 1, 2 when 2-D, else at 0, 1, ndims (xio_matrix_fold to
 * change).  Messages call the file `shown`. */
int xio_open_input(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                   xio_matrix *m, xio_error *err);

/* Creates a new file (failing if it exists) holding a dataset of `type`
 * shaped and folded as `shape`, never filled (every element gets written),
 * with link and attribute creation order tracked, as netCDF-C writes files;
 * its unlimited axes stay unlimited where it is chunked.
 * It is stored as `storage` says (h5_storage.h): by default like `like`'s
 * dataset (the input, whose transpose `shape` is; NULL: contiguous), a
 * chunked input's filters kept, its chunks as xio_storage_apply shapes
 * them.  It takes like's fill value if its creator set one.  Unfiltered storage is allocated at
 * once.  Messages call the file `shown`. */
int xio_create_output(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      hid_t type, const xio_matrix *like, const xio_storage *storage,
                      const xio_shape *shape, xio_matrix *m, xio_error *err);

/* Creates a new file (failing if it exists) as xio_create_output does,
 * its datasets to be made by xio_create_dataset: m holds the file alone. */
int xio_create_file(MPI_Comm comm, const char *path, const char *shown, xio_matrix *m,
                    xio_error *err);

/* Local.  m describes, with no file, the dataset xio_create_dataset would
 * make for `shape` (its chunks and filters; `like`, `storage` as there),
 * folded as the transpose of `from`; `text` gets its storage as
 * xio_describe_storage would say it: what a run will write, planned. */
int xio_plan_dataset(const xio_matrix *like, const xio_storage *storage, const xio_shape *shape,
                     hid_t type, const xio_matrix *from, xio_matrix *m, char *text, size_t size,
                     xio_error *err);

/* Closes m's dataset, if any, and opens `dataset` of its file instead,
 * folded as xio_open_input folds. */
int xio_use_dataset(xio_matrix *m, const char *shown, const char *dataset, xio_error *err);

/* Closes m's dataset, if any (m made by xio_create_file or
 * xio_create_output, or opened writable), and makes another in its file,
 * as xio_create_output makes its one. */
int xio_create_dataset(xio_matrix *m, const char *shown, const char *dataset, hid_t type,
                       const xio_matrix *like, const xio_storage *storage, const xio_shape *shape,
                       xio_error *err);

/* Local.  Reads m's values from variable m->dataset of the netCDF-3 file
 * at path (messages call it `shown`) instead of m's file, its view. */
int xio_matrix_read_netcdf3(xio_matrix *m, const char *path, const char *shown, xio_error *err);

/* Opens path's dataset, read-only or for writing; messages call it `shown`.
 * Folded as xio_open_input folds. */
int xio_open_existing(MPI_Comm comm, const char *path, const char *shown, const char *dataset,
                      int writable, xio_matrix *m, xio_error *err);

/* This rank's block [row, row + nrows) x [col, col + ncols) of the folded
 * matrix, row-major and contiguous in buf; blocks may be empty.
 * Collective MPI-IO. */
int xio_read_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                   void *buf, xio_error *err);
int xio_write_block(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols,
                    const void *buf, xio_error *err);

/* Local.  Whether xio_read_block reads m without HDF5 from now on (xpose's
 * codec, its chunks located by a read before): such reads may run beside
 * another thread's HDF5 calls.  The same on every rank. */
int xio_reads_alone(const xio_matrix *m);

/* Collective, before m's passes: its block source's reads readied
 * (xio_block_source's prepare); nothing for others. */
int xio_prepare_reads(const xio_matrix *m, xio_error *err);

/* Local.  This rank's block that a later xio_read_block will read, asked
 * of storage now, where xpose's codec reads m (its chunks' bytes come in
 * beside other work); elsewhere nothing. */
void xio_read_ahead(const xio_matrix *m, int64_t row, int64_t nrows, int64_t col, int64_t ncols);

/* What xio_storage_apply needs to know of m, as an input. */
xio_storage_like xio_matrix_storage_like(const xio_matrix *m);

/* "contiguous", "chunked 512 x 256, shuffle+gzip=4" and the like (in
 * --filter's words where it has them). */
void xio_describe_storage(const xio_matrix *m, char *text, size_t size);

/* Local.  File access for collective MPI-IO over comm (on MPI_COMM_SELF,
 * for one rank alone): metadata read by one rank and broadcast, written
 * collectively.  H5I_INVALID_HID where HDF5 cannot set it up. */
hid_t xio_file_access(MPI_Comm comm);

/* Flushes what was written through to storage (MPI_File_sync); held by
 * one writer, that writer's. */
int xio_flush(const xio_matrix *m, xio_error *err);

/* The size of m's file now, in bytes. */
int xio_file_size(const xio_matrix *m, uint64_t *bytes, xio_error *err);

/* Closes everything; a failed flush of a written file is reported.  Every
 * rank must call it for the same matrix, open or not (or held by one
 * writer, which closes it). */
int xio_close(xio_matrix *m, xio_error *err);

/* Splits "file.h5:/group/dataset" at the first ":/", or where there is none
 * and no file has the whole name, "file.h5:group/dataset" at the last ':'
 * (the dataset made absolute).  dataset_out is "" when there is none.
 * Returns -1 when the file part is empty or a part is too long. */
int xio_split_path(const char *arg, char *file_out, size_t file_size, char *dataset_out,
                   size_t dataset_size);

/* Local.  Fails, naming FILE:DATASET (`shown`, `dataset`), where dset's
 * contiguous data runs past the end of `file` (collective MPI-IO would
 * read the rest as zeros). */
int xio_check_stored_in_file(hid_t file, hid_t dset, const char *shown, const char *dataset,
                             xio_error *err);

#endif
