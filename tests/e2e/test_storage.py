"""End to end: the output keeps what the input said about its storage and
its axes.  Layouts and filters (as the input's by default, chunks
shaped for the output's order; --layout and --filter override), fill values, dimension scales
attached with the axes swapped, and netCDF-4 files that come out readable
by ncdump and netCDF4-python with their dimensions swapped.  Checked by
h5py, netCDF4-python and ncdump, at 1 to 4 ranks, with odd shapes and
budgets that split the passes."""

import itertools
import os
import re
import shutil
import subprocess
import unittest

import h5py
import numpy as np

from harness import ToolTestCase, pattern

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4; jobs/setup.sh installs it
    netCDF4 = None

SHAPE = (211, 149)  # prime-ish, so that chunks and passes never line up


def storage(dset):
    return (dset.chunks, dset.compression, dset.compression_opts, dset.shuffle, dset.fletcher32)


class Storage(ToolTestCase):
    def write_input(self, **kwargs):
        with h5py.File(self.path("in.h5"), "w") as f:
            f.create_dataset("m", data=pattern(SHAPE, "<f4"), fillvalue=-2.5, **kwargs)

    def transpose(self, ranks, *options):
        result = self.xpose(ranks, "--force", "--memory", "96K", "-v", *options, "in.h5",
                            "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertEqual(f["m"].fillvalue, -2.5, "the fill value was not kept")
            return storage(f["m"]), result

    def test_output_keeps_the_inputs_storage_with_chunks_for_its_own_order(self):
        inputs = {
            "contiguous": {},
            "chunked": {"chunks": (37, 53)},
            "gzip": {"chunks": (16, 40), "compression": "gzip", "compression_opts": 7},
            "shuffle+gzip+fletcher32": {"chunks": (64, 8), "compression": "gzip",
                                        "shuffle": True, "fletcher32": True},
        }
        expected = {
            "contiguous": (None, None, None, False, False),
            "chunked": ("pass", None, None, False, False),
            "gzip": ("pass", "gzip", 7, False, False),
            "shuffle+gzip+fletcher32": ("pass", "gzip", 4, True, True),
        }
        for (name, kwargs), ranks in itertools.product(inputs.items(), (1, 2, 3, 4)):
            with self.subTest(input=name, ranks=ranks):
                self.write_input(**kwargs)
                got, result = self.transpose(ranks)
                want = expected[name]
                if want[0] == "pass":
                    self.assertChunksFitPasses(got[0], result)
                    want = (got[0],) + want[1:]
                    if kwargs.get("compression"):  # passes read input chunks whole
                        block = re.search(r"grid of blocks up to (\d+) x (\d+)", result.stderr)
                        for side, chunk, whole in zip(map(int, block.groups()), kwargs["chunks"],
                                                      SHAPE):
                            self.assertTrue(side % chunk == 0 or side == whole, result.stderr)
                self.assertEqual(got, want)

    def assertChunksFitPasses(self, chunks, result):
        """The chunks chosen for this output: of at least 1 MiB where the data
        has it (here it has not), shaped for the output's order, and within
        the block of output rows and columns one pass moves, each pass
        starting on a chunk's edge, so that each chunk is written whole by
        one pass."""
        height, width = map(int, re.search(r"grid of blocks up to (\d+) x (\d+)",
                                           result.stderr).groups())
        for side, block, whole in zip(chunks, (width, height), SHAPE[::-1]):
            self.assertLessEqual(side, block, (chunks, result.stderr))
            self.assertTrue(block % side == 0 or block == whole, (chunks, result.stderr))

    def test_layout_and_filter_options(self):
        cases = [
            ({}, ("--layout", "chunked=20x30"), ((20, 30), None, None, False, False)),
            # chunks of up to 1 MiB: here the whole (small) dataset
            ({}, ("--filter", "gzip=6"), ((149, 211), "gzip", 6, False, False)),
            ({}, ("--layout", "chunked=7x300", "--filter", "shuffle+gzip"),
             ((7, 211), "gzip", 4, True, False)),
            ({"chunks": (16, 40), "compression": "gzip"}, ("--layout", "contiguous"),
             (None, None, None, False, False)),
            ({"chunks": (16, 40), "compression": "gzip"}, ("--filter", "none"),
             ("pass", None, None, False, False)),
            ({"chunks": (16, 40)}, ("--filter", "gzip=1"), ("pass", "gzip", 1, False, False)),
        ]
        for (kwargs, options, expected), ranks in itertools.product(cases, (1, 3)):
            with self.subTest(options=options, ranks=ranks):
                self.write_input(**kwargs)
                got, result = self.transpose(ranks, *options)
                if expected[0] == "pass":
                    self.assertChunksFitPasses(got[0], result)
                    expected = (got[0],) + expected[1:]
                self.assertEqual(got, expected)
                self.assertIn("storage: input", result.stderr)

    def test_szip_is_refused_before_anything_is_written(self):
        # Parallel HDF5 1.10's szip chunks do not read back (see hdf5/h5_storage.c).
        self.write_input()
        result = self.xpose(2, "--filter", "szip", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("parallel HDF5 cannot write szip reliably", result.stderr)
        self.assertEqual(self.leftovers(), [])
        self.assertFalse(os.path.exists(self.path("out.h5")))

    def test_bad_storage_options_are_usage_errors(self):
        self.write_input()
        for options in (("--layout", "chunky"), ("--layout", "chunked=0x5"),
                        ("--filter", "gzip=10"), ("--filter", "lz4"),
                        ("--layout", "contiguous", "--filter", "gzip")):
            with self.subTest(options=options):
                result = self.xpose(1, *options, "in.h5", "out.h5")
                self.assertEqual(result.returncode, 2, result)
                self.assertRegex(result.stderr.splitlines()[0], "^xpose: (invalid|--filter)")

    def test_compressed_output_is_smaller_and_verified(self):
        # Smooth data compresses; the read-back check reads the chunks back.
        with h5py.File(self.path("in.h5"), "w") as f:
            f.create_dataset("m", data=np.add.outer(np.arange(400.0), np.arange(300.0)),
                             chunks=(50, 60), compression="gzip", shuffle=True)
        result = self.xpose(2, "--memory", "256K", "--verify", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertLess(f["m"].id.get_storage_size(), 400 * 300 * 8 // 4)

    def test_default_chunks_grow_a_compressed_output_by_under_one_percent(self):
        # Chunking alone: against the same transposed values stored in the
        # input's chunks transposed (h5py), the default chunks (of the
        # input's size, shaped for the passes) take at most 1% more.
        rows, cols = 1024, 1536
        rng = np.random.default_rng(7)
        data = (np.sin(np.arange(rows) / 37.0)[:, None] * np.cos(np.arange(cols) / 53.0)
                + rng.normal(0, 1e-3, (rows, cols)))
        filters = {"compression": "gzip", "compression_opts": 4, "shuffle": True}
        with h5py.File(self.path("in.h5"), "w") as f:
            f.create_dataset("m", data=data, chunks=(256, 512), **filters)
        with h5py.File(self.path("same.h5"), "w") as f:
            f.create_dataset("m", data=data.T, chunks=(512, 256), **filters)
            theirs = f["m"].id.get_storage_size()
        result = self.xpose(2, "in.h5", "out.h5")  # the default budget
        self.assertEqual(result.returncode, 0, result)
        self.assertNotIn("note:", result.stderr)
        with h5py.File(self.path("out.h5"), "r") as f:
            ours, chunks = f["m"].id.get_storage_size(), f["m"].chunks
            np.testing.assert_array_equal(f["m"][...], data.T)
        self.assertLessEqual(ours, theirs * 1.01, (chunks, ours, theirs))
        self.assertTrue(1 << 19 < chunks[0] * chunks[1] * 8 <= 1 << 20, chunks)  # the input's size

    def test_the_codec_and_hdf5s_pipeline_store_the_same_chunks(self):
        # xpose's codec compresses each rank's chunks on its threads and rank
        # 0 writes them as stored; HDF5's pipeline (XPOSE_CODEC=hdf5, with
        # zlib: XPOSE_DEFLATE) compresses them itself.  The same values,
        # filters and chunks; libdeflate's streams at most 1% larger than
        # zlib's, on smooth values with noise, as fields are.
        rows, cols = 512, 768
        data = (np.sin(np.arange(rows) / 37.0)[:, None] * np.cos(np.arange(cols) / 53.0)
                + np.random.default_rng(7).normal(0, 1e-3, (rows, cols)))
        with h5py.File(self.path("in.h5"), "w") as f:
            f.create_dataset("m", data=data, chunks=(64, 96), compression="gzip", shuffle=True,
                             fletcher32=True)
        stored = {}
        for path, env in (("codec", {"XPOSE_CODEC": ""}), ("hdf5", {"XPOSE_CODEC": "hdf5",
                                                                    "XPOSE_DEFLATE": "zlib"})):
            for ranks in (1, 3):
                out = f"{path}{ranks}.h5"
                result = self.xpose(ranks, "-v", "in.h5", out, env=env)
                self.assertEqual(result.returncode, 0, result)
                self.assertEqual("written as stored by rank 0" in result.stderr, path == "codec",
                                 result.stderr)
                self.assertTransposed("in.h5", "/m", out, "/m")
                with h5py.File(self.path(out), "r") as f:
                    stored[path, ranks] = storage(f["m"]), f["m"].id.get_storage_size()
        for ranks in (1, 3):
            (codec, ours), (hdf5, theirs) = stored["codec", ranks], stored["hdf5", ranks]
            self.assertEqual(codec, hdf5)
            self.assertLessEqual(ours, theirs * 1.01, (ours, theirs))
        result = self.xpose(1, "-v", "--force", "in.h5", "out.h5", env={"XPOSE_CODEC": "hdf5"})
        self.assertIn("compressed by HDF5's pipeline (XPOSE_CODEC=hdf5)", result.stderr)

    def test_the_codec_reads_a_file_with_a_user_block(self):
        # HDF5's chunk addresses count from the end of the user block.
        with h5py.File(self.path("in.h5"), "w", userblock_size=512) as f:
            f.create_dataset("m", data=np.arange(200 * 300, dtype="f4").reshape(200, 300),
                             chunks=(20, 30), compression="gzip", shuffle=True)
        result = self.xpose(2, "-v", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("of the reads on rank 0: locating the input's chunks", result.stderr)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")

    def test_chunks_no_pass_holds_whole_are_named_with_what_to_change(self):
        # 100 x 100 compressed chunks and passes of 30 x 27 blocks: a stopped
        # run would start over; the note says why and what keeps it resumable.
        self.write_input(chunks=(64, 8), compression="gzip")
        _, result = self.transpose(2, "--memory", "32K", "--layout", "chunked=100x100")
        self.assertEqual(result.stderr.count("xpose: note: the passes (blocks of "), 1, result)
        self.assertIn("do not hold whole 100 x 100 chunks of out.h5, so a stopped run of it "
                      "starts over when resumed", result.stderr)
        self.assertIn("a larger --memory, or --layout chunked=... with chunks that divide the "
                      "blocks, keeps it resumable", result.stderr)
        _, result = self.transpose(2, "--memory", "32K", "--layout", "chunked=10x10")
        self.assertNotIn("do not hold whole", result.stderr)

    def test_default_chunks_of_a_time_series_stop_at_the_ranks_shares(self):
        # Each of 2 ranks compresses whole chunks of its latitudes.  The
        # square side here is 32 (chunks of 32 x 32 x 256 before), which does
        # not divide 45 a rank; 15 does.  91 latitudes: 46 and 45, whose even
        # share 46 is over 32, in chunks of 23, two to a rank.
        for lats, want in ((90, (15, 40, 256)), (91, (23, 40, 256))):
            shape = (256, lats, 40)
            data = pattern(shape, "<f4")
            with h5py.File(self.path("in.h5"), "w") as f:
                f.create_dataset("tas", data=data, chunks=(1, lats, 40), compression="gzip",
                                 shuffle=True)
            result = self.xpose(2, "--force", "-v", "--axes", "1,2,0", "in.h5", "out.h5")
            self.assertEqual(result.returncode, 0, result)
            self.assertIn("written as stored by rank 0", result.stderr)
            with h5py.File(self.path("out.h5"), "r") as f:
                chunks = f["tas"].chunks
                self.assertTrue(np.array_equal(f["tas"][...], data.transpose(1, 2, 0)))
            self.assertEqual(chunks, want)

class DimensionScales(ToolTestCase):
    def test_scales_are_copied_and_attached_swapped(self):
        rows, cols = 23, 17
        with h5py.File(self.path("in.h5"), "w") as f:
            d = f.create_dataset("g/m", data=pattern((rows, cols), "<i4"))
            time = f.create_dataset("g/time", data=np.arange(rows) * 0.5)
            time.attrs["units"] = "s"
            time.make_scale("time")
            station = f.create_dataset("coords/station", data=np.arange(cols, dtype="<i8") + 100)
            station.make_scale("station")
            d.dims[0].attach_scale(time)
            d.dims[1].attach_scale(station)
            d.dims[0].label = "t"
            d.dims[1].label = "s"
        for ranks in (1, 2, 4):
            with self.subTest(ranks=ranks):
                result = self.xpose(ranks, "--force", "--memory", "8K", "in.h5:/g/m", "out.h5")
                self.assertEqual(result.returncode, 0, result)
                self.assertNotIn("warning", result.stderr)
                self.assertTransposed("in.h5", "/g/m", "out.h5", "/g/m")
                with h5py.File(self.path("out.h5"), "r") as f:
                    m = f["g/m"]
                    self.assertEqual([m.dims[i].label for i in range(2)], ["s", "t"])
                    self.assertEqual(m.dims[0][0].name, "/coords/station")
                    self.assertEqual(m.dims[1][0].name, "/g/time")
                    np.testing.assert_array_equal(m.dims[0][0][...], np.arange(cols) + 100)
                    np.testing.assert_array_equal(m.dims[1][0][...], np.arange(rows) * 0.5)
                    self.assertEqual(f["g/time"].attrs["units"], "s")
                    self.assertTrue(h5py.h5ds.is_scale(f["g/time"].id))


    def test_one_scale_on_both_axes_is_copied_once(self):
        with h5py.File(self.path("in.h5"), "w") as f:
            d = f.create_dataset("m", data=pattern((9, 9), "<f4"))
            grid = f.create_dataset("grid", data=np.arange(9.0) * 2)
            grid.make_scale("grid")
            d.dims[0].attach_scale(grid)
            d.dims[1].attach_scale(grid)
        result = self.xpose(2, "in.h5:/m", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertEqual([f["m"].dims[i][0].name for i in range(2)], ["/grid", "/grid"])
            np.testing.assert_array_equal(f["grid"][...], np.arange(9.0) * 2)


@unittest.skipIf(netCDF4 is None, "python3-netcdf4 is not installed")
class NetCDF(ToolTestCase):
    def test_netcdf4_variable_comes_out_readable_with_dimensions_swapped(self):
        rows, cols = 31, 19
        data = pattern((rows, cols), "<f8")
        with netCDF4.Dataset(self.path("in.nc"), "w") as nc:
            nc.title = "xpose test"
            nc.createDimension("time", None)  # unlimited: chunked, and a growable scale
            nc.createDimension("station", cols)  # no coordinate variable
            t = nc.createVariable("time", "f8", ("time",))
            t.units = "hours since 2000-01-01"
            t[:] = np.arange(rows) * 6.0
            v = nc.createVariable("temperature", "f8", ("time", "station"), fill_value=-999.0)
            v.units = "K"
            v.long_name = "air temperature"
            v[:] = data
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                result = self.xpose(ranks, "--force", "--memory", "16K", "in.nc:/temperature",
                                    "out.nc")
                self.assertEqual(result.returncode, 0, result)
                self.assertNotIn("warning", result.stderr)
                if shutil.which("ncdump"):
                    header = subprocess.run(["ncdump", "-h", self.path("out.nc")], text=True,
                                            capture_output=True, timeout=60)
                    self.assertEqual(header.returncode, 0, header.stderr)
                    self.assertIn("double temperature(station, time)", header.stdout)
                    self.assertIn("double time(time)", header.stdout)
                with netCDF4.Dataset(self.path("out.nc")) as nc:
                    v = nc["temperature"]
                    self.assertEqual(v.dimensions, ("station", "time"))
                    self.assertEqual(v.units, "K")
                    self.assertEqual(v.long_name, "air temperature")
                    self.assertEqual(v._FillValue, -999.0)
                    np.testing.assert_array_equal(v[:], data.T)
                    np.testing.assert_array_equal(nc["time"][:], np.arange(rows) * 6.0)
                    self.assertEqual(nc["time"].units, "hours since 2000-01-01")
                    self.assertEqual(len(nc.dimensions["station"]), cols)


if __name__ == "__main__":
    unittest.main(verbosity=2)
