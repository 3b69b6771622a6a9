# Sourced by the benchmark scripts whose runs each append a line
# "name seconds max_rss_kb wrong" to $dir/results (wrong may be absent: 0).
# mean_row NAME BYTES: "name seconds MB/s rss_MiB wrong" over NAME's
# repetitions: the mean time, 2 x BYTES / that time, the largest peak RSS,
# the wrong values summed.  mean_seconds NAME: NAME's mean time, or
# nothing where it did not run.
mean_row() {
  awk -v n="$1" -v bytes="$2" '$1 == n {s += $2; c++; if ($3 > m) m = $3; w += $4}
    END {printf "%s %.3f %.0f %d %d\n", n, s / c, 2 * bytes / (s / c) / 1e6, m / 1024 + 0.5, w}' \
    "$dir/results"
}
mean_seconds() {
  awk -v n="$1" '$1 == n {s += $2; c++} END {if (c) printf "%.3f", s / c}' "$dir/results"
}
