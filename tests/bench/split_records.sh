# Sourced by the benchmark scripts.  split_records FILE TIMES PIECES PREFIX:
# the TIMES records of FILE as PIECES files PREFIX0.nc, PREFIX1.nc, ...
# (ncks -d time; the last may hold fewer), as an archive hands them out.
split_records() {
  local file="$1" times="$2" pieces="$3" prefix="$4" first last
  local per=$(((times + pieces - 1) / pieces))
  for p in $(seq 0 $((pieces - 1))); do
    first=$((p * per)) last=$((p * per + per - 1))
    [ "$last" -lt "$times" ] || last=$((times - 1))
    ncks -O -d "time,$first,$last" "$file" "$prefix$p.nc"
  done
}
