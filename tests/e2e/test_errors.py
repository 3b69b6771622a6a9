"""End to end: every bad input gets one clear message and a non-zero exit
on every rank (no hang: each run has a hard timeout), leaves the input
untouched and leaves no output, partial or otherwise."""

import os
import shutil
import subprocess
import unittest
import zlib

import h5py
import numpy as np

from harness import ToolTestCase, digest, pattern

USAGE, ERROR = 2, 1


class BadInput(ToolTestCase):
    def setUp(self):
        super().setUp()
        self.good = self.write_h5("good.h5", {"/m": pattern((6, 5), "<f4")})

    def expect_failure(self, args, message, code=ERROR, ranks=2, output="out.h5", env=None):
        inputs = [a.split(":/")[0] for a in args if a.endswith(".h5") or ".h5:/" in a]
        before = {p: digest(self.path(p)) for p in inputs if os.path.isfile(self.path(p))}
        existed = os.path.exists(self.path(output))
        result = self.xpose(ranks, *args, env=env)
        self.assertEqual(result.returncode, code, result)
        self.assertEqual(result.stderr.count(message), 1,
                         f"expected the message {message!r} exactly once\n{result}")
        for p, d in before.items():
            self.assertEqual(digest(self.path(p)), d, f"{p} was modified")
        if not existed:
            self.assertFalse(os.path.exists(self.path(output)), "an output was left behind")
        self.assertEqual(self.leftovers(), [], "a partial file was left behind")
        return result

    # ---- files and datasets

    def test_a_damaged_chunk_is_named_with_its_dataset_and_file(self):
        values = pattern((40, 30), "<f4")
        damages = {
            "broken": "do not inflate: the file is damaged",
            "short": "inflate to 300 bytes, not 600: the file is damaged",
        }
        for damage, message in damages.items():
            with self.subTest(damage=damage):
                with h5py.File(self.path("z.h5"), "w") as f:
                    f.create_dataset("m", data=values, chunks=(10, 15), compression="gzip")
                with h5py.File(self.path("z.h5"), "r+") as f:
                    info = f["m"].id.get_chunk_info_by_coord((20, 15))
                    if damage == "short":  # a whole zlib stream of half a chunk
                        f["m"].id.write_direct_chunk((20, 15), zlib.compress(b"x" * 300))
                if damage == "broken":
                    with open(self.path("z.h5"), "r+b") as f:
                        f.seek(info.byte_offset + 4)
                        f.write(b"\xff" * 16)
                for ranks in (1, 3):  # read by xpose's codec (even where a run forces HDF5's)
                    self.expect_failure(["z.h5", "out.h5"],
                                        "z.h5:/m: the stored bytes of its chunk at (20, 15) (",
                                        ranks=ranks, env={"XPOSE_CODEC": ""})
                    self.expect_failure(["z.h5", "out.h5"], message, ranks=ranks,
                                        env={"XPOSE_CODEC": ""})

    def test_missing_input_file(self):
        self.expect_failure(["nope.h5", "out.h5"], "nope.h5: No such file or directory")

    def test_input_not_hdf5(self):
        with open(self.path("text.h5"), "w") as f:
            f.write("not an HDF5 file\n" * 100)
        self.expect_failure(["text.h5", "out.h5"], "text.h5 is not an HDF5 file", ranks=3)

    def test_netcdf3_output_to_verify_is_refused(self):
        # xpose reads netCDF-3 inputs (test_netcdf3) and writes netCDF-4
        # outputs: a netCDF-3 file named as the output of `xpose verify` is
        # none of its outputs.
        try:
            import netCDF4
        except ImportError:
            self.skipTest("python3-netcdf4 is not installed")
        kinds = {"NETCDF3_CLASSIC": "netCDF-3 classic", "NETCDF3_64BIT_OFFSET":
                 "netCDF-3 64-bit offset", "NETCDF3_64BIT_DATA": "netCDF-3 CDF-5"}
        for fmt, kind in kinds.items():
            with self.subTest(format=fmt):
                name = fmt.lower() + ".h5"  # a misleading name: the bytes decide
                with netCDF4.Dataset(self.path(name), "w", format=fmt) as nc:
                    nc.createDimension("y", 3)
                    nc.createDimension("x", 4)
                    nc.createVariable("v", "f4", ("y", "x"))[:] = np.ones((3, 4))
                self.expect_failure(["verify", "good.h5", name], f"{name} is a {kind}")

    @unittest.skipIf(not shutil.which("nccopy"), "netcdf-bin is not installed")
    def test_the_nccopy_hint_gives_a_file_xpose_rearranges(self):
        import netCDF4
        values = np.arange(5 * 3 * 4, dtype="<f4").reshape(5, 3, 4)
        with netCDF4.Dataset(self.path("slices.nc"), "w", format="NETCDF3_CLASSIC") as nc:
            nc.createDimension("time", None)
            nc.createDimension("lat", 3)
            nc.createDimension("lon", 4)
            nc.createVariable("tas", "f4", ("time", "lat", "lon"))[:] = values
        subprocess.run(["nccopy", "-k", "nc4", self.path("slices.nc"), self.path("slices.nc.nc4")],
                       check=True, timeout=60)
        result = self.xpose(2, "--dims", "lat,lon,time", "slices.nc.nc4", "series.nc")
        self.assertEqual(result.returncode, 0, result)
        with netCDF4.Dataset(self.path("series.nc")) as nc:
            self.assertTrue(nc.dimensions["time"].isunlimited())  # netCDF-3 could not keep it so
            self.assertEqual(nc["tas"].dimensions, ("lat", "lon", "time"))
            np.testing.assert_array_equal(nc["tas"][:], values.transpose(1, 2, 0))

    def test_input_is_a_fifo(self):
        os.mkfifo(self.path("fifo.h5"))  # opening it to read would block
        self.expect_failure(["fifo.h5", "out.h5"], "fifo.h5 is a FIFO, not an HDF5 file", ranks=3)

    def test_input_is_a_directory(self):
        os.mkdir(self.path("dir.h5"))
        self.expect_failure(["dir.h5", "out.h5"], "dir.h5 is a directory")

    def test_missing_dataset(self):
        self.expect_failure(["good.h5:/nothere", "out.h5"], "good.h5 has no dataset /nothere")
        self.expect_failure(["good.h5:/a/b/c", "out.h5"], "good.h5 has no dataset /a/b/c")

    def test_group_is_not_a_dataset(self):
        self.write_h5("g.h5", {"/grp/m": pattern((3, 3), "<i4")})
        self.expect_failure(["g.h5:/grp", "out.h5"], "g.h5:/grp is not a dataset")

    def test_not_two_dimensional(self):
        self.write_h5("nd.h5", {"/seven": np.ones((2, 3, 2, 3, 2, 3, 2)), "/one": np.arange(5.0),
                                "/scalar": np.float64(3.0)})
        self.expect_failure(["nd.h5:/seven", "out.h5"], "reversing the 7 axes of nd.h5:/seven takes "
                            "more than 3 moves: give the output's axis order with --dims (by "
                            "name) or --axes (by number)", code=2)
        self.expect_failure(["nd.h5:/one", "out.h5"], "nd.h5:/one is 1-D (5)", ranks=3)
        self.expect_failure(["nd.h5:/scalar", "out.h5"], "nd.h5:/scalar is a scalar")
        self.expect_failure(["nd.h5", "out.h5"], "reversing the 7 axes of nd.h5:/seven", code=2)
        self.write_h5("1d.h5", {"/one": np.arange(5.0)})
        self.expect_failure(["1d.h5", "out.h5"], "1d.h5 holds no dataset of 2 or more axes")

    def test_several_candidates(self):
        self.write_h5("two.h5", {"/a": np.ones((2, 2)), "/g/b": np.ones((3, 2, 2))})
        self.expect_failure(["two.h5", "out.h5"],
                            "two.h5 holds 2 datasets of 2 or more axes (/a (2 axes), /g/b (3 axes)): "
                            "name one as two.h5:/g/b, or give --dims with the axes' names in the "
                            "order wanted to rearrange every one that order changes", code=USAGE)
        self.expect_failure(["two.h5:/g/c", "out.h5"], "two.h5 has no dataset /g/c (its datasets "
                            "of 2 or more axes: /a (2 axes), /g/b (3 axes))")

    def test_a_cf_file_never_gets_its_bounds_chosen(self):
        # tas(time, lat, lon) and time_bnds(time, nv): the one 2-D dataset
        # is time's bounds, never the one to move unasked.
        try:
            import netCDF4
        except ImportError:
            self.skipTest("python3-netcdf4 is not installed")

        def write(name, variables):
            with netCDF4.Dataset(self.path(name), "w") as nc:
                for dim, size in (("time", None), ("nv", 2), ("lat", 3), ("lon", 4)):
                    nc.createDimension(dim, size)
                time = nc.createVariable("time", "f8", ("time",))
                time.bounds = "time_bnds"
                time[:] = [0, 1]
                nc.createVariable("time_bnds", "f8", ("time", "nv"))[:] = [[0, 1], [1, 2]]
                for v in variables:
                    nc.createVariable(v, "f4", ("time", "lat", "lon"))[:] = np.ones((2, 3, 4))

        write("two.nc", ("tas", "pr"))
        self.expect_failure(["two.nc", "out.h5"],
                            "two.nc holds 2 datasets of 2 or more axes (/pr (time, lat, lon), "
                            "/tas (time, lat, lon)): name one as two.nc:/pr, or give --dims "
                            "lat,lon,time to rearrange every one that order changes", code=USAGE)
        write("one.nc", ("tas",))
        result = self.xpose(2, "one.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("one.nc:/tas", result.stdout)

    def test_variable_length_and_reference_types(self):
        with h5py.File(self.path("vl.h5"), "w") as f:
            f.create_dataset("strings", data=np.array([["a", "bb"], ["ccc", "d"]], dtype=object),
                             dtype=h5py.string_dtype())
            seq = f.create_dataset("seqs", (2, 2), dtype=h5py.vlen_dtype(np.int32))
            seq[0, 0] = [1, 2, 3]
            refs = f.create_dataset("refs", (2, 2), dtype=h5py.ref_dtype)
            refs[0, 0] = f["strings"].ref
            f.create_dataset("compound", (2, 2),
                             dtype=np.dtype([("x", "<i4"), ("s", h5py.string_dtype())]))
        self.expect_failure(["vl.h5:/strings", "out.h5"], "holds variable-length strings")
        self.expect_failure(["vl.h5:/seqs", "out.h5"], "holds variable-length sequences")
        self.expect_failure(["vl.h5:/refs", "out.h5"], "holds references")
        self.expect_failure(["vl.h5:/compound", "out.h5"], "holds variable-length strings")

    # ---- outputs

    def test_existing_output_needs_force(self):
        self.write_h5("out.h5", {"/precious": np.arange(7)})
        before = digest(self.path("out.h5"))
        self.expect_failure(["good.h5", "out.h5"], "output out.h5 exists; use --force to replace it")
        self.assertEqual(digest(self.path("out.h5")), before, "an existing output was modified")

    def test_output_is_the_input(self):
        os.symlink("good.h5", self.path("link.h5"))
        os.link(self.path("good.h5"), self.path("hard.h5"))
        for out in ("good.h5", "link.h5", "hard.h5", "./good.h5"):
            with self.subTest(output=out):
                self.expect_failure(["--force", "good.h5", out], "is the input file", output=out)

    def test_unwritable_destination(self):
        self.expect_failure(["good.h5", "missing/dir/out.h5"],
                            "output directory missing/dir: No such file or directory",
                            output="missing/dir/out.h5")
        if os.geteuid() == 0:  # root may write anywhere a file system allows
            result = self.expect_failure(["good.h5", "/proc/xpose-test.h5"], "cannot create",
                                         output="/proc/xpose-test.h5")
        else:
            os.mkdir(self.path("ro"), 0o555)
            result = self.expect_failure(["good.h5", "ro/out.h5"], "cannot write to ro",
                                         output="ro/out.h5")
        self.assertIn("xpose: error:", result.stderr)

    def test_output_is_a_directory(self):
        os.mkdir(self.path("d.h5"))
        self.expect_failure(["--force", "good.h5", "d.h5"], "output d.h5 is a directory",
                            output="d.h5/x")

    def test_output_that_is_no_regular_file_is_never_replaced(self):
        os.symlink("/dev/null", self.path("null.h5"))
        os.mkfifo(self.path("fifo.h5"))
        self.expect_failure(["--force", "good.h5", "null.h5"],
                            "output null.h5 is a character device; xpose replaces regular files "
                            "only", output="null.h5")
        self.expect_failure(["--force", "good.h5", "fifo.h5"],
                            "output fifo.h5 is a FIFO; xpose replaces regular files only",
                            output="fifo.h5")
        self.assertTrue(os.path.islink(self.path("null.h5")))

    def test_relative_dataset_paths(self):
        self.write_h5("g.h5", {"/grp/m": pattern((6, 4), "<i2")})
        result = self.xpose(2, "g.h5:grp/m", "out.h5:t/y")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("g.h5", "/grp/m", "out.h5", "/t/y")
        self.expect_failure(["g.h5:nope", "out2.h5"], "g.h5 has no dataset /nope", output="out2.h5")

    def test_gpu_exchange_without_gpus_is_a_usage_error(self):
        result = self.xpose(3, "--exchange", "staged", "good.h5", "out.h5")
        if result.returncode == 0:
            self.skipTest("this machine has GPUs")
        self.assertEqual(result.returncode, USAGE, result)
        self.assertEqual(result.stderr.count("--exchange staged moves GPU buffers: "), 1, result)
        self.assertFalse(os.path.exists(self.path("out.h5")))

    # ---- the command line

    def test_malformed_sizes(self):
        for size in ("12Q", "0", "-5", "1.5.5", "", "G", "99999999999T"):
            with self.subTest(size=size):
                self.expect_failure(["--memory", size, "good.h5", "out.h5"],
                                    f"invalid --memory '{size}'", code=USAGE)
        self.expect_failure(["--max-message", "3G", "good.h5", "out.h5"],
                            "invalid --max-message '3G'", code=USAGE)

    def test_malformed_command_lines(self):
        self.expect_failure(["--frobnicate", "good.h5", "out.h5"], "unknown option '--frobnicate'",
                            code=USAGE)
        self.expect_failure(["-x", "good.h5", "out.h5"], "unknown option '-x'", code=USAGE)
        self.expect_failure(["good.h5"], "missing arguments", code=USAGE)
        # two inputs joined into extra.h5, the second not there
        self.expect_failure(["good.h5", "out.h5", "extra.h5"], "out.h5: No such file or directory")
        self.expect_failure(["good.h5", "out.h5", "--memory"], "option '--memory' needs a value",
                            code=USAGE)
        self.expect_failure([":/m", "out.h5"], "invalid input ':/m'", code=USAGE)
        self.expect_failure(["-q", "-v", "good.h5", "out.h5"], "--quiet and --verbose", code=USAGE)

    def test_help_and_version(self):
        result = self.xpose(2, "--help")
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(result.stdout.count("Usage: xpose"), 1, result)
        for option in ("--memory", "--verify", "--force", "--quiet", "--verbose", "--max-message",
                       "--version", "Exit status", "Examples:"):
            self.assertIn(option, result.stdout)
        self.assertEqual(result.stdout.count("  mpirun -q -n "), 3, result)  # the examples
        result = self.xpose(1, "--version")
        self.assertEqual(result.returncode, 0, result)
        self.assertRegex(result.stdout, r"^xpose \d+\.\d+\.\d+ \(HDF5 ")


if __name__ == "__main__":
    unittest.main(verbosity=2)
