/* An HDF5 file's metadata read as xpose reads it, before it does: every
 * object opened, every attribute read (variable-length ones from the
 * global heap), every dataset's type, shape, storage and dimension scales
 * (DIMENSION_LIST's references followed), and the values of datasets of
 * up to 4 MiB (the coordinates and bounds a run copies through HDF5).
 * HDF5 1.10 reads some of that without checking it, and a damaged file (a
 * DIMENSION_LIST whose heap object is cut) crashes it with SIGSEGV inside
 * H5DSget_num_scales: so the tool runs this walk in a process of its own
 * first (tool/files/input_file.c), where a crash costs nothing but a message. */
#ifndef XIO_H5_METADATA_WALK_H
#define XIO_H5_METADATA_WALK_H

/* Local, without MPI.  0 where the file opens and its objects could be
 * visited, -1 where not (its errors are the run's to report: only a
 * crash or a hang of this walk is told apart). */
int xio_h5_metadata_walk(const char *path);

#endif
