/* The files of a directory store (a Zarr store) as one output: synced
 * before it is published, dropped from the page cache before it is read
 * back, removed when a run does not keep it. */
#ifndef TOOL_STORE_FILES_H
#define TOOL_STORE_FILES_H

#include "h5_error.h"

/* Local.  Everything written under `path` on storage (syncfs of its file
 * system: one call, not one per chunk file). */
int tool_store_sync(const char *path, xio_error *err);

/* Local.  Every file under `path` dropped from this node's page cache
 * (clean pages only: sync first); the first errno value, or 0. */
int tool_store_evict(const char *path);

/* Local.  The directory `path` and everything under it removed (xpose's
 * own partial store only); no such directory is not an error. */
int tool_store_remove(const char *path, xio_error *err);

#endif
