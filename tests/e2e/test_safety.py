"""End to end: the safety promise on N-D and whole-file runs, as a hostile
but realistic user tries it (issue 39): inputs named like the run's scratch
files, contiguous data past a file's end, an output dataset that is another
variable of the file, outputs that changed after they were published,
kills while the rest of the file is copied, attributes that changed,
histories of any length, record dimensions with no records, long names,
and --only changed between a stop and a resume.

Every run is held to the promise: exit 0 and exactly the output wanted
(read back with h5py or netCDF4-python), or a non-zero exit with the input
byte-identical and nothing under the output's name."""

import os
import signal
import subprocess
import unittest

import h5py
import numpy as np

from harness import (XPOSE, ToolTestCase, digest, finish, mpirun, pattern, resume_record,
                     set_end_of_allocation, start, wait_for_record)

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4
    netCDF4 = None

OK, ERROR, USAGE, VERIFY = 0, 1, 2, 3
WRITE_FAULT = os.environ.get("XPOSE_WRITE_FAULT", "")
DIMS = ["--dims", "lat,lon,time"]


def write_climate(path, times=6, lats=6, lons=8, history=None, extra_levels=0):
    """tas(time, lat, lon), compressed with one record per chunk, and
    orog(lat, lon), which a whole-file run copies; `extra_levels` adds
    extra(level, lat, lon) to copy, for copies that take a while."""
    with netCDF4.Dataset(path, "w") as nc:
        nc.title = "safety test"
        if history is not None:
            nc.history = history
        nc.createDimension("time", None)
        nc.createDimension("lat", lats)
        nc.createDimension("lon", lons)
        nc.createVariable("time", "f8", ("time",))[:] = np.arange(times)
        nc.createVariable("lat", "f4", ("lat",))[:] = np.arange(lats)
        nc.createVariable("lon", "f4", ("lon",))[:] = np.arange(lons)
        tas = nc.createVariable("tas", "f4", ("time", "lat", "lon"), zlib=True,
                                chunksizes=(1, lats, lons))
        tas.units = "K"
        if times:
            tas[:] = pattern((times, lats, lons), "<f4")
        nc.createVariable("orog", "f4", ("lat", "lon"))[:] = pattern((lats, lons), "<f4", 1) + 7
        if extra_levels:
            nc.createDimension("level", extra_levels)
            nc.createVariable("extra", "f4", ("level", "lat", "lon"))[:] = pattern(
                (extra_levels, lats, lons), "<f4", 2)


def variables(path):
    with netCDF4.Dataset(path) as nc:
        nc.set_auto_maskandscale(False)
        return {name: (v.dimensions, v[...]) for name, v in nc.variables.items()}


@unittest.skipIf(netCDF4 is None, "python3-netcdf4 is not installed")
class Safety(ToolTestCase):
    def assertRefused(self, result, code, before, input_name, output_name, said):
        """A refused run: its status, one message, the input as it was, and
        nothing under the output's name or beside it."""
        self.assertEqual(result.returncode, code, result)
        self.assertIn(said, result.stderr)
        self.assertEqual(digest(self.path(input_name)), before, "the input was modified")
        self.assertFalse(os.path.exists(self.path(output_name)), result)
        self.assertEqual([f for f in self.leftovers() if f != self.path(input_name)], [])

    def assertSeries(self, in_name, out_name, only=False):
        """out is in with tas as lat, lon, time and the rest as it was."""
        before, after = variables(self.path(in_name)), variables(self.path(out_name))
        # --only: tas and its dimensions' coordinate variables
        self.assertEqual(sorted(after) if only else list(after),
                         ["lat", "lon", "tas", "time"] if only else list(before))
        dims, values = before["tas"]
        self.assertEqual(after["tas"][0], ("lat", "lon", "time"))
        np.testing.assert_array_equal(after["tas"][1], values.transpose(1, 2, 0))
        for name in after:
            if name != "tas":
                self.assertEqual(after[name][0], before[name][0])
                np.testing.assert_array_equal(after[name][1], before[name][1])

    # 1
    def test_the_scratch_files_names_are_refused_as_inputs(self):
        scratch = "sn_out.h5.xpose-scratch-1"
        self.write_h5(scratch, {"/d": pattern((3, 4, 5), "<f4")})
        os.link(self.path(scratch), self.path("hard.h5"))
        os.symlink(scratch, self.path("soft.h5"))
        before = digest(self.path(scratch))
        # one move, and two through the scratch file
        for axes in ("2,0,1", "1,0,2", "2,1,0"):
            for name in (scratch, "hard.h5", "soft.h5"):
                with self.subTest(axes=axes, input=name):
                    result = self.xpose(2, "--axes", axes, name, "sn_out.h5")
                    self.assertRefused(result, USAGE, before, scratch, "sn_out.h5",
                                       "the scratch file of output sn_out.h5")
        self.assertTrue(os.path.exists(self.path(scratch)))

    def test_a_run_of_one_move_leaves_files_it_did_not_make(self):
        self.write_h5("in.h5", {"/d": pattern((3, 4, 5), "<f4")})
        for name in ("out.h5.xpose-scratch-1", "out.h5.xpose-scratch-2"):
            with open(self.path(name), "w") as f:
                f.write("not xpose's\n")
        result = self.xpose(2, "--axes", "2,0,1", "in.h5", "out.h5")  # one move
        self.assertEqual(result.returncode, OK, result)
        result = self.xpose(2, "--force", "--axes", "9,0,1", "in.h5", "out.h5")  # refused
        self.assertEqual(result.returncode, USAGE, result)
        for name in ("out.h5.xpose-scratch-1", "out.h5.xpose-scratch-2"):
            with open(self.path(name)) as f:
                self.assertEqual(f.read(), "not xpose's\n")

    # 2
    def truncated(self, name, chunks=None, path="/d"):
        """A contiguous dataset whose file ends half-way through its data,
        the superblock's end of file patched to match (h5py then refuses to
        read it: "addr overflow")."""
        with h5py.File(self.path(name), "w", libver="latest") as f:
            f.create_dataset("/keep", data=pattern((5, 7), "<f4"))
            f.create_dataset(path, data=pattern((40, 50, 60), "<f4"), chunks=chunks)
        size = os.path.getsize(self.path(name))
        with open(self.path(name), "r+b") as f:
            f.truncate(size - 240000)
        set_end_of_allocation(self.path(name), size - 240000)
        return digest(self.path(name))

    def test_data_past_the_end_of_the_file_is_refused(self):
        before = self.truncated("short.h5")
        for io in ("auto", "mpi-io"):
            for args in (["--axes", "2,0,1"], ["--axes", "1,0,2"], ["--verify"]):
                with self.subTest(io=io, args=args):
                    result = self.xpose(2, "--io", io, *args, "short.h5:/d", "out.h5")
                    self.assertRefused(result, ERROR, before, "short.h5", "out.h5",
                                       "short.h5:/d: its data ends at byte")

    def test_a_copy_past_the_end_of_the_file_is_refused(self):
        # the truncated dataset is one the whole-file run copies
        before = self.truncated("short.h5", path="/copied")
        result = self.xpose(2, "short.h5:/keep", "out.h5")
        self.assertRefused(result, ERROR, before, "short.h5", "out.h5",
                           "short.h5:/copied: its data ends at byte")

    def test_outputs_on_a_file_system_without_fallocate(self):
        # Space cannot be reserved there: the output's datasets lie past its
        # file's end until HDF5 flushes it, which no check may take for a
        # truncated file.  Raw and collective passes, two moves, whole files.
        if not WRITE_FAULT:
            self.skipTest("the write fault shim was not built")
        self.write_h5("in.h5", {"/d": pattern((30, 40, 50), "<f4")})
        write_climate(self.path("in.nc"))
        env = {"LD_PRELOAD": WRITE_FAULT, "WRITE_FAULT_NO_FALLOCATE": "1"}
        for args in (["--axes", "2,0,1"], ["--axes", "2,1,0"], ["--io", "mpi-io", "--axes", "1,0,2"],
                     ["--memory", "8K", "--axes", "2,0,1"]):
            with self.subTest(args=args):
                result = self.xpose(2, "--force", *args, "in.h5", "out.h5", env=env)
                self.assertEqual(result.returncode, OK, result)
                order = [int(a) for a in args[-1].split(",")]
                with h5py.File(self.path("out.h5"), "r") as f:
                    np.testing.assert_array_equal(
                        f["/d"][...], pattern((30, 40, 50), "<f4").transpose(order))
        result = self.xpose(3, *DIMS, "in.nc", "out.nc", env=env)
        self.assertEqual(result.returncode, OK, result)
        self.assertSeries("in.nc", "out.nc")

    # 3
    def test_an_output_dataset_that_is_another_variable_is_refused(self):
        write_climate(self.path("clash.nc"))
        before = digest(self.path("clash.nc"))
        for out in ("/orog", "orog", "/lat/x"):
            with self.subTest(output=out):
                result = self.xpose(2, "--no-verify", *DIMS, "clash.nc:/tas", "out.nc:" + out)
                self.assertRefused(result, USAGE, before, "clash.nc", "out.nc",
                                   "give --only to write the transpose of /tas alone")
        # with --only the rest is not copied: nothing to clash with
        result = self.xpose(2, "--only", *DIMS, "clash.nc:/tas", "out.nc:/orog")
        self.assertEqual(result.returncode, OK, result)
        out = variables(self.path("out.nc"))
        np.testing.assert_array_equal(out["orog"][1], variables(self.path("clash.nc"))["tas"][1]
                                      .transpose(1, 2, 0))
        self.assertNotIn("tas", out)

    # 4 and 6
    def test_already_done_and_verify_compare_the_whole_file(self):
        write_climate(self.path("in.nc"))
        result = self.xpose(3, *DIMS, "in.nc", "out.nc")
        self.assertEqual(result.returncode, OK, result)
        published = self.path("out.nc")
        kept = self.path("kept.nc")
        os.rename(published, kept)

        def edited(change):
            subprocess.run(["cp", kept, published], check=True)
            with netCDF4.Dataset(published, "a") as nc:
                change(nc)

        def orog(nc):
            nc["orog"][0, 0] = 99

        def title(nc):
            nc.title = "changed"

        def units(nc):
            nc["tas"].units = "degC"

        def new_attribute(nc):
            nc["orog"].units = "m"

        for change, differs in ((orog, "/orog"), (title, "attribute title"),
                                (units, "attribute units"), (new_attribute, "attribute units")):
            with self.subTest(change=change.__name__):
                edited(change)
                result = self.xpose(2, "verify", *DIMS, "in.nc", "out.nc")
                self.assertEqual(result.returncode, VERIFY, result)
                self.assertIn(differs, result.stdout + result.stderr)
                before = digest(published)
                result = self.xpose(2, "--resume", *DIMS, "in.nc", "out.nc")
                self.assertEqual(result.returncode, ERROR, result)
                self.assertIn("exists and is not the transpose of in.nc", result.stderr)
                self.assertEqual(digest(published), before, "the output was touched")
        # the input's copied variable changed after publishing: not done either
        subprocess.run(["cp", kept, published], check=True)
        with netCDF4.Dataset(self.path("in.nc"), "a") as nc:
            nc["orog"][1, 1] = -5
        result = self.xpose(2, "--resume", *DIMS, "in.nc", "out.nc")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("/orog differs", result.stderr)
        result = self.xpose(2, "--resume", "--force", *DIMS, "in.nc", "out.nc")
        self.assertEqual(result.returncode, OK, result)
        self.assertSeries("in.nc", "out.nc")
        result = self.xpose(1, "--resume", *DIMS, "in.nc", "out.nc")
        self.assertEqual(result.returncode, OK, result)
        self.assertIn("nothing to do", result.stdout)

    # 5
    def test_a_rank_killed_while_the_rest_is_copied_leaves_a_resumable_partial(self):
        write_climate(self.path("in.nc"), times=20, lats=50, lons=100, extra_levels=800)
        args = ["--memory", "64K", *DIMS, "in.nc", "out.nc"]
        partial = self.path("out.nc.xpose-partial")
        killed = False
        for attempt in range(3):  # the copies take seconds: the kill lands in them
            proc = start(2, [XPOSE, *args], cwd=self.dir)
            record = wait_for_record(proc, partial, lambda r: r.get("copying") == "1" and
                                     os.path.exists(partial) and os.path.getsize(partial) > 1 << 20)
            ranks = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                   text=True).stdout.split()
            if record and ranks:
                os.kill(int(ranks[-1]), signal.SIGKILL)
            result = finish(proc)
            # the kill counts where it landed before the copies ended
            killed = bool(record and ranks and
                          (resume_record(partial) or {}).get("copying") == "1")
            if killed:
                break
            for leftover in [self.path("out.nc"), *self.leftovers()]:
                if os.path.exists(leftover):
                    os.remove(leftover)
        if not killed:
            self.skipTest("the copies ended before the kill reached them")
        self.assertNotEqual(result.returncode, OK, result)
        self.assertFalse(os.path.exists(self.path("out.nc")))
        self.assertEqual(resume_record(partial)["copying"], "1")
        # what jobs/xpose.sbatch runs again after a requeue
        result = self.xpose(2, "--resume", *args)
        self.assertEqual(result.returncode, OK, result)
        self.assertIn("starting over: out.nc.xpose-partial holds no pass yet", result.stderr)
        self.assertSeries("in.nc", "out.nc")
        self.assertEqual(self.leftovers(), [])

    # 7
    def test_a_history_of_any_length_is_kept_whole(self):
        history = "".join("line %d of an old history\n" % i for i in range(4000))  # 100 KiB
        self.assertGreater(len(history), 65536)
        write_climate(self.path("in.nc"), history=history)
        result = self.xpose(2, *DIMS, "in.nc", "out.nc")
        self.assertEqual(result.returncode, OK, result)
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            line, rest = nc.history.split("\n", 1)
        self.assertIn("--dims lat,lon,time in.nc out.nc", line)
        self.assertEqual(rest, history)

    # 8
    def test_a_record_dimension_with_no_records_stays_unlimited(self):
        write_climate(self.path("in.nc"), times=0)
        result = self.xpose(4, *DIMS, "in.nc", "out.nc")
        self.assertEqual(result.returncode, OK, result)
        with netCDF4.Dataset(self.path("out.nc"), "a") as nc:
            self.assertTrue(nc.dimensions["time"].isunlimited())
            tas = nc["tas"]
            self.assertEqual(tas.dimensions, ("lat", "lon", "time"))
            self.assertEqual(tas.shape, (6, 8, 0))
            self.assertNotEqual(tas.chunking(), "contiguous")
            self.assertTrue(tas.filters()["zlib"])
            nc["time"][0] = 1.0  # a record appended, as users do
            tas[:, :, 0] = np.full((6, 8), 2.5, "f4")
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            self.assertEqual(nc["tas"].shape, (6, 8, 1))
            np.testing.assert_array_equal(nc["tas"][:, :, 0], np.full((6, 8), 2.5, "f4"))

    # 9
    def test_long_output_names_are_shortened_or_refused(self):
        self.write_h5("ln_in.h5", {"/d": pattern((3, 4, 5, 6), "<f4")})
        long_name = "s" * 240 + ".h5"  # NAME_MAX less the shortest suffix
        result = self.xpose(2, "--axes", "3,2,1,0", "ln_in.h5", long_name)  # two moves
        self.assertEqual(result.returncode, OK, result)
        with h5py.File(self.path(long_name), "r") as f:
            np.testing.assert_array_equal(f["/d"][...], pattern((3, 4, 5, 6), "<f4").T)
        self.assertEqual(self.leftovers(), [])
        # absolute paths past what Open MPI's OMPIO takes: opened by a shorter
        # name, or refused at once; never a crash, on either MPI-IO layer
        deep = self.path("d" * (235 - len(self.dir) - 16))
        os.mkdir(deep)
        for length in (235, 244, 260):
            out = os.path.join(deep, "x" * (length - len(deep) - 4) + ".h5")
            for io in ("ompio", "romio321"):
                for cwd in (self.dir, "/"):
                    with self.subTest(length=length, io=io, cwd=cwd):
                        result = mpirun(2, [XPOSE, "--axes", "1,0,3,2", self.path("ln_in.h5"),
                                            out], env={"OMPI_MCA_io": io}, cwd=cwd)
                        if result.returncode == OK:
                            with h5py.File(out, "r") as f:
                                self.assertEqual(f["/d"].shape, (4, 3, 6, 5))
                            os.remove(out)
                        else:
                            self.assertEqual(result.returncode, USAGE, result)
                            self.assertIn("OMPIO", result.stderr)
                            self.assertFalse(os.path.exists(out))
                        self.assertEqual(os.listdir(deep), [])

    # 10
    def stopped(self, *extra):
        """A whole-file run stopped after a few passes, its partial kept."""
        args = ["--memory", "16K", "--checkpoint", "0", *extra, *DIMS, "in.nc", "out.nc"]
        proc = start(2, [XPOSE, *args], cwd=self.dir)
        wait_for_record(proc, self.path("out.nc.xpose-partial"),
                        lambda r: int(r["passes_done"]) >= 3)
        os.kill(proc.pid, signal.SIGUSR1)
        result = finish(proc)
        if result.returncode == OK:
            self.skipTest("the run ended before the stop reached it")
        self.assertEqual(result.returncode, 4, result)

    def test_only_changed_on_resume_is_refused_with_what_to_do(self):
        write_climate(self.path("in.nc"), times=2000)
        args = ["--memory", "16K", *DIMS, "in.nc", "out.nc"]
        for started, other, says in (([], ["--only"], "started without --only"),
                                     (["--only"], [], "started with --only")):
            with self.subTest(started=started):
                self.stopped(*started)
                result = self.xpose(2, "--resume", *other, *args)
                self.assertEqual(result.returncode, ERROR, result)
                self.assertIn(says, result.stderr)
                self.assertFalse(os.path.exists(self.path("out.nc")))
                self.assertTrue(os.path.exists(self.path("out.nc.xpose-partial")))
                result = self.xpose(2, "--resume", *started, *args)
                self.assertEqual(result.returncode, OK, result)
                self.assertIn("(resumed)", result.stdout)
                self.assertSeries("in.nc", "out.nc", only=bool(started))
                os.remove(self.path("out.nc"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
