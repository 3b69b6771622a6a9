"""Sharded Zarr v3 outputs under AddressSanitizer (issue 74): xpose built
again with -fsanitize=address (its tool alone, without CUDA, in
BUILD/asan), then values of 1, 2, 4 and 8 bytes written into shards that
do not divide the array, shards larger than it, shards of fewer chunks
than its grid, on one rank and on two, rearranged and rechunked.  Each run
must exit 0 with no report from AddressSanitizer, and its store read by
zarr_reference.py as the input's values.

Environment: XPOSE_SOURCE (the source tree), XPOSE_ASAN_BUILD (where to
build), and mpiexec's as for the e2e tests."""

import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zarr_reference as ref  # noqa: E402

try:
    import netCDF4
except ImportError:
    print("skipped: python3-netcdf4 is missing")
    sys.exit(77)

SOURCE, BUILD = os.environ["XPOSE_SOURCE"], os.environ["XPOSE_ASAN_BUILD"]
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")
PREFLAGS = shlex.split(os.environ.get("MPIEXEC_PREFLAGS", ""))
NT, NY, NX = 30, 11, 17
CASES = [  # ranks, options
    (1, ["--chunks", "time/7,lat/4,lon/5", "--shards", "time/14,lat/8,lon/10"]),
    (2, ["--chunks", "time/7,lat/4,lon/5", "--shards", "time/100,lat/100,lon/100"]),
    (2, ["--chunks", "time/3,lat/11,lon/17", "--shards", "time/6"]),
    (2, ["--dims", "lat,lon,time", "--chunks", "lat/2,lon/3,time/30", "--shards", "lat/6,lon/9"]),
    (1, ["--dims", "lat,lon,time", "--chunks", "lat/4,lon/4,time/8", "--shards",
         "lat/8,lon/8,time/16", "--memory", "512K"]),
]


def build():
    flags = "-fsanitize=address -fno-omit-frame-pointer"
    for step in (["cmake", "-S", SOURCE, "-B", BUILD, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                  f"-DCMAKE_C_FLAGS={flags}", "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address",
                  "-DXPOSE_BUILD_TESTS=OFF", "-DXPOSE_BUILD_BENCHMARKS=OFF", "-DXPOSE_CUDA=OFF"],
                 ["cmake", "--build", BUILD, "-j", str(os.cpu_count() or 2), "--target",
                  "xpose_tool"]):
        made = subprocess.run(step, capture_output=True, text=True)
        if made.returncode:
            sys.exit(f"building xpose with AddressSanitizer failed:\n{made.stdout[-3000:]}\n"
                     f"{made.stderr[-3000:]}")
    return os.path.join(BUILD, "xpose")


def make_input(path, dtype):
    # random bits: chunks that do not compress, whose Blosc framing fills
    # every byte of their bound
    bits = np.random.default_rng(74).integers(0, 256, NT * NY * NX * np.dtype(dtype).itemsize)
    values = bits.astype("u1").view(dtype).reshape(NT, NY, NX)
    with netCDF4.Dataset(path, "w") as f:
        for name, n in (("time", NT), ("lat", NY), ("lon", NX)):
            f.createDimension(name, n)
            f.createVariable(name, "f8", (name,))[:] = np.arange(n) + 0.5
        f.createVariable("v", dtype, ("time", "lat", "lon"), zlib=True)[:] = values
    return values


def main():
    xpose = build()
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0:exitcode=99"}
    failures = 0
    with tempfile.TemporaryDirectory(prefix="xpose-asan-") as work:
        for dtype in ("i1", "i2", "f4", "f8"):
            values = make_input(os.path.join(work, f"{dtype}.nc"), dtype)
            for k, (ranks, options) in enumerate(CASES):
                out = os.path.join(work, f"{dtype}-{k}.zarr")
                cmd = [MPIEXEC, "-n", str(ranks), *PREFLAGS, xpose, "-q", "--zarr-format", "3",
                       *options, os.path.join(work, f"{dtype}.nc"), out]
                run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
                why = None
                if run.returncode or "AddressSanitizer" in run.stderr:
                    why = f"exit {run.returncode}\n{run.stderr[-4000:]}"
                else:
                    v = ref.read_store(out)["v"]
                    expected = values.transpose([("time", "lat", "lon").index(d) for d in v.dims])
                    if v.values.tobytes() != np.ascontiguousarray(expected).tobytes():
                        why = "the store does not hold the input's values"
                print(f"{dtype} {' '.join(options)} on {ranks}: {why or 'ok'}")
                failures += why is not None
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
