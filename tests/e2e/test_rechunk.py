"""End to end: rechunking, with the axes in their order or moved.  The
output's chunks by dimension name (--chunks, nccopy -c's syntax) or by
length (--layout chunked=AxBx...), shapes they do not divide, 1 to 4
ranks (some owning nothing), every element size, budgets that split the
passes, stops and resumes, and whole netCDF-4 files; every value, every
attribute and the chunks checked by h5py, netCDF4-python and ncdump."""

import os
import shutil
import signal
import subprocess
import unittest

import h5py
import numpy as np

from harness import XPOSE, ToolTestCase, finish, pattern, start, wait_for_record

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4; jobs/setup.sh installs it
    netCDF4 = None

USAGE, STOPPED = 2, 4


class Rechunk(ToolTestCase):
    def write_cube(self, a, chunks, **kwargs):
        with h5py.File(self.path("in.h5"), "w") as f:
            f.create_dataset("c", data=a, chunks=chunks, **kwargs)
            f["c"].attrs["units"] = "K"

    def rechunk(self, ranks, *options, expect_chunks, order=None):
        """Runs xpose on in.h5:/c and checks out.h5:/c: in.h5's values with
        the axes in `order` (None: as they are), chunked as expected."""
        result = self.xpose(ranks, "--force", *options, "in.h5:/c", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("in.h5"), "r") as a, h5py.File(self.path("out.h5"), "r") as b:
            want = a["c"][...] if order is None else np.transpose(a["c"][...], order)
            self.assertEqual(b["c"].shape, want.shape, result)
            self.assertTrue(np.array_equal(b["c"][...], want), f"values differ\n{result}")
            self.assertEqual(b["c"].chunks, expect_chunks, result)
            if "--filter" not in options:
                self.assertEqual(b["c"].compression, a["c"].compression)
            self.assertEqual(b["c"].attrs["units"], "K")
        return result

    def test_chunk_shapes_and_ranks(self):
        # 13 x 7 x 11 with one time step per chunk, as climate archives are;
        # chunks that do not divide the axes; 4 ranks share 7 rows, and with
        # a small budget many passes.
        a = pattern((13, 7, 11), "<f4")
        self.write_cube(a, (1, 7, 11), compression="gzip", shuffle=True)
        cases = [
            (("--axes", "0,1,2", "--layout", "chunked=13x3x5"), (13, 3, 5), None),
            (("--axes", "0,1,2", "--layout", "chunked=5x7x11"), (5, 7, 11), None),
            (("--axes", "0,1,2", "--layout", "chunked=13x1x1"), (13, 1, 1), None),
            (("--axes", "2,0,1", "--layout", "chunked=4x5x6"), (4, 5, 6), (2, 0, 1)),
        ]
        for ranks, memory in ((1, "24K"), (2, "1G"), (3, "24K"), (4, "1G"), (4, "24K")):
            for options, chunks, order in cases:
                with self.subTest(ranks=ranks, options=options, memory=memory):
                    self.rechunk(ranks, "--memory", memory, *options, expect_chunks=chunks,
                                 order=order)

    def test_two_axes_and_contiguous_input(self):
        a = pattern((37, 29), "<f8")
        self.write_h5("in.h5", {"/c": a}, attrs={"/c": {"units": "K"}})
        self.rechunk(3, "--axes", "0,1", "--layout", "chunked=37x4", expect_chunks=(37, 4))
        self.rechunk(2, "--axes", "0,1", "--layout", "chunked=8x29", "--filter", "gzip",
                     "--memory", "16K", expect_chunks=(8, 29))

    def test_every_element_size(self):
        compound = np.dtype([("a", "u1"), ("b", "<i2")])
        for dtype in ("u1", "<i2", "<f4", "<f8", "<c16", compound):
            with self.subTest(dtype=str(dtype)):
                self.write_cube(pattern((9, 6, 5), dtype), (1, 6, 5))
                self.rechunk(2, "--axes", "0,1,2", "--layout", "chunked=9x4x5", "--memory",
                             "16K", expect_chunks=(9, 4, 5))

    def test_verify_reads_a_rechunked_output_back(self):
        self.write_cube(pattern((8, 6, 5), "<f4"), (1, 6, 5), compression="gzip")
        self.rechunk(2, "--axes", "0,1,2", "--layout", "chunked=8x3x5", expect_chunks=(8, 3, 5))
        result = self.xpose(2, "verify", "in.h5:/c", "out.h5:/c")
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("out.h5"), "r+") as f:
            f["c"][3, 2, 1] += 1
        result = self.xpose(2, "verify", "in.h5:/c", "out.h5:/c")
        self.assertEqual(result.returncode, 3, result)

    def test_stop_then_resume(self):
        # Thousands of tiny passes, a checkpoint after each; chunks written
        # whole by each pass (compressed) and in parts (not).
        a = pattern((300, 256, 3), "<f8")
        self.write_cube(a, (1, 256, 3))
        partial = self.path("out.h5.xpose-partial")
        for layout, memory, extra in (("chunked=300x4x3", "256K", ("--filter", "gzip=1")),
                                      ("chunked=300x4x3", "8K", ()),
                                      ("chunked=20x5x3", "8K", ())):
            with self.subTest(layout=layout, memory=memory, extra=extra):
                args = [XPOSE, "--memory", memory, "--checkpoint", "0", "--axes", "0,1,2",
                        "--layout", layout, *extra, "in.h5:/c", "out.h5"]
                proc = start(2, args, cwd=self.dir)
                record = wait_for_record(proc, partial,
                                         lambda r: int(r["passes_done"]) >= 2, 60, 0.01)
                if record is None:
                    self.fail(f"no pass was recorded\n{finish(proc)}")
                os.kill(proc.pid, signal.SIGUSR1)
                result = finish(proc)
                self.assertEqual(result.returncode, STOPPED, result)
                self.assertFalse(os.path.exists(self.path("out.h5")))
                result = self.xpose(3, "--resume", *args[1:])
                self.assertEqual(result.returncode, 0, result)
                self.assertIn("(resumed)", result.stdout)
                with h5py.File(self.path("out.h5"), "r") as f:
                    self.assertTrue(np.array_equal(f["c"][...], a))
                self.assertEqual(self.leftovers(), [])
                os.remove(self.path("out.h5"))

    def test_usage_errors(self):
        self.write_cube(pattern((8, 6, 5), "<f4"), (1, 6, 5))
        cases = [
            (("--chunks", "time"), "--chunks time: 'time' is not NAME/LENGTH"),
            (("--chunks", "time/0"), "'time/0' is not NAME/LENGTH"),
            (("--chunks", "a/2,a/3"), "--chunks a/2,a/3 names a dimension twice"),
            (("--chunks", "time/2", "--layout", "chunked"), "--chunks and --layout exclude"),
            (("--axes", "0,1,2"), "keeps every axis of in.h5:/c in place: nothing to transpose "
             "(to rechunk it, give the output's chunks"),
            (("--axes", "0,1,2", "--layout", "chunked=3x4"),
             "the chunks asked for have 2 axes, and out.h5 has 3"),
            (("--layout", "chunked=3x0x2"), "invalid --layout 'chunked=3x0x2'"),
        ]
        for options, message in cases:
            with self.subTest(options=options):
                result = self.xpose(1, *options, "in.h5:/c", "out.h5")
                self.assertNotEqual(result.returncode, 0, result)
                self.assertEqual(result.stderr.count(message), 1, result)
                self.assertFalse(os.path.exists(self.path("out.h5")))
                self.assertEqual(self.leftovers(), [])


@unittest.skipIf(netCDF4 is None, "netCDF4-python is not installed (Debian: python3-netcdf4)")
class RechunkNetcdf(ToolTestCase):
    def write_nc(self, name="in.nc", times=60, lats=23, lons=31):
        rng = np.random.default_rng(5)
        with netCDF4.Dataset(self.path(name), "w", format="NETCDF4") as nc:
            nc.title = "rechunk test"
            nc.createDimension("time", None)
            nc.createDimension("lat", lats)
            nc.createDimension("lon", lons)
            nc.createDimension("bnds", 2)
            time = nc.createVariable("time", "f8", ("time",))
            time.units = "days since 2000-01-01"
            time[:] = np.arange(times)
            bnds = nc.createVariable("time_bnds", "f8", ("time", "bnds"))
            bnds[:] = np.stack([np.arange(times), np.arange(times) + 1], axis=1)
            nc.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-89, 89, lats)
            nc.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 359, lons)
            for v in ("tas", "pr"):
                var = nc.createVariable(v, "f4", ("time", "lat", "lon"), zlib=True, complevel=4,
                                        shuffle=True, chunksizes=(1, lats, lons),
                                        fill_value=np.float32(1e20))
                var.units = "K" if v == "tas" else "kg m-2 s-1"
                var[:] = (250 + 30 * rng.random((times, lats, lons))).astype("f4")
        return self.path(name)

    def test_whole_file_rechunked_as_nccopy_would(self):
        self.write_nc()
        with h5py.File(self.path("in.nc"), "a") as f:  # as the benchmarks' hourly year has it
            f["time_bnds"].attrs.create("_Netcdf4Dimid", 3, dtype="<i4")
        spec = "time/60,lat/8,lon/8"
        result = self.xpose(2, "--chunks", spec, "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertNotIn("warning", result.stderr)  # netCDF-C's hidden ids are no references
        self.assertIn("3 datasets rearranged", result.stdout)  # tas, pr and time_bnds
        with netCDF4.Dataset(self.path("in.nc")) as a, netCDF4.Dataset(self.path("out.nc")) as b:
            self.assertEqual(list(a.dimensions), list(b.dimensions))
            self.assertTrue(b.dimensions["time"].isunlimited())
            self.assertEqual(b.title, a.title)
            for name, var in a.variables.items():
                self.assertEqual(b[name].dimensions, var.dimensions, name)
                self.assertTrue(np.array_equal(b[name][...], var[...]), name)
                for attr in var.ncattrs():
                    self.assertEqual(str(b[name].getncattr(attr)), str(var.getncattr(attr)))
            self.assertEqual(b["tas"].chunking(), [60, 8, 8])
            self.assertEqual(b["pr"].chunking(), [60, 8, 8])
            self.assertEqual(b["time_bnds"].chunking(), [60, 2])
            self.assertEqual(b["tas"].filters()["zlib"], True)
            self.assertEqual(b["tas"].filters()["shuffle"], True)
        if shutil.which("nccopy") and shutil.which("ncdump"):
            # nccopy's own rechunking of the same file, chunk for chunk
            subprocess.run(["nccopy", "-c", spec, "in.nc", "ref.nc"], cwd=self.dir, check=True)
            ours, theirs = (subprocess.run(["ncdump", "-hs", f], cwd=self.dir, check=True,
                                           capture_output=True, text=True).stdout
                            for f in ("out.nc", "ref.nc"))
            for var in ("tas", "pr"):
                line = f"\t\t{var}:_ChunkSizes = 60, 8, 8 ;"
                self.assertIn(line, ours)
                self.assertIn(line, theirs)

    def test_chunks_with_dims_and_unknown_names(self):
        self.write_nc(times=12, lats=7, lons=9)
        result = self.xpose(3, "--dims", "lat,lon,time", "--chunks", "time/12,lat/2,lon/4",
                            "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        with netCDF4.Dataset(self.path("in.nc")) as a, netCDF4.Dataset(self.path("out.nc")) as b:
            self.assertEqual(b["tas"].dimensions, ("lat", "lon", "time"))
            self.assertEqual(b["tas"].chunking(), [2, 4, 12])
            self.assertTrue(np.array_equal(b["tas"][...], np.transpose(a["tas"][...], (1, 2, 0))))
            self.assertEqual(b["time_bnds"].chunking(), [12, 2])  # rechunked in its order
        result = self.xpose(2, "--chunks", "tiem/4", "in.nc", "bad.nc")
        self.assertEqual(result.returncode, USAGE, result)
        self.assertIn("--chunks tiem/4: no dataset of in.nc has an axis named 'tiem'",
                      result.stderr)
        self.assertFalse(os.path.exists(self.path("bad.nc")))


if __name__ == "__main__":
    unittest.main()
