# Sourced by the benchmark scripts.  evict FILE...: syncs, then drops each
# file from the page cache (GNU dd's nocache with count=0 is
# posix_fadvise(DONTNEED) over the whole file; no root needed).
evict() {
  sync
  for f in "$@"; do [ ! -e "$f" ] || dd if="$f" iflag=nocache count=0 status=none; done
}
