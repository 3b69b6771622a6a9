# Sourced by the benchmark scripts.  evict FILE...: syncs, then drops each
# file from the page cache (GNU dd's nocache with count=0 is
# posix_fadvise(DONTNEED) over the whole file; no root needed), and where
# root may, the whole page cache (drop_caches: the GPU machines).
evict() {
  sync
  for f in "$@"; do [ ! -e "$f" ] || dd if="$f" iflag=nocache count=0 status=none; done
  [ "$(id -u)" -ne 0 ] || echo 3 2>/dev/null >/proc/sys/vm/drop_caches || true
}
