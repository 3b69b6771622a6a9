"""End to end: several HDF5 files joined as HDF5 files (their view made
with HDF5, not netCDF-C): matrices with no netCDF dimensions joined along
the first axis of the datasets --concat names, odd sizes and an input of
no rows, at 3 ranks in small passes, against numpy's concatenation;
h5py's extendible datasets (an unlimited first axis) with groups, strings
and compressed chunks joined alone and rearranged; netCDF-4 files with a
group and a string variable against ncrcat followed by ncpdq; every
refusal naming the files and the dataset; a stopped join resumed.  Each
output is checked again by `xpose verify IN1 ... OUT`."""

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
except ImportError:  # Debian's python3-netcdf4
    netCDF4 = None

COLS = 11


def strings(values):
    return np.array(values, dtype=h5py.string_dtype())


class JoinedHDF5(ToolTestCase):
    def matrices(self, rows=(5, 0, 7, 3), extra=None, prefix="part"):
        """Files of a contiguous /m (rows x COLS, distinct values; the
        third big-endian), a fixed /x and an attribute each; extra(i,
        file) changes one."""
        names, parts = [], []
        for i, n in enumerate(rows):
            names.append(f"{prefix}{i}.h5")
            parts.append(np.arange(n * COLS, dtype="<f8").reshape(n, COLS) + 1000 * i + 0.5)
            with h5py.File(self.path(names[-1]), "w") as f:
                f["m"] = parts[-1].astype(">f8" if i == 2 else "<f8")  # read in the first's order
                f["x"] = np.arange(COLS, dtype="<i4")
                f.attrs["part"] = i
                if extra:
                    extra(i, f)
        return names, np.concatenate(parts)

    def test_matrices_joined_along_the_datasets_named(self):
        names, joined = self.matrices()
        result = self.xpose(3, "--memory", "16K", "--concat", "/m", "--axes", "1,0", *names,
                            "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("(4 inputs joined)", result.stdout)
        with h5py.File(self.path("out.h5")) as out:
            np.testing.assert_array_equal(out["m"][...], joined.T)
            np.testing.assert_array_equal(out["x"][...], np.arange(COLS))
            self.assertEqual(out.attrs["part"], 0)  # the first input's attributes
        self.assertEqual(self.leftovers(), [])
        checked = self.xpose(2, "verify", "--concat", "/m", "--axes", "1,0", *names, "out.h5")
        self.assertEqual(checked.returncode, 0, checked)
        swapped = self.xpose(2, "verify", "--concat", "/m", "--axes", "1,0", names[2], names[0],
                             *names[3:], "out.h5")
        self.assertEqual(swapped.returncode, 3, swapped)
        planned = self.xpose(2, "--plan", "--concat", "/m", "--axes", "1,0", *names, "p.h5")
        self.assertEqual(planned.returncode, 0, planned)
        self.assertIn("inputs: 4 joined, 15 records: part0.h5 (5), part1.h5 (0), part2.h5 (7), "
                      "part3.h5 (3)", planned.stdout)
        self.assertEqual(self.leftovers(), [])

    def test_matrices_large_enough_move_raw(self):
        # passes of over 1 MiB a rank: the members read at their offsets
        # (one big-endian, converted) beside the raw writes of the output
        parts = [pattern((n, 1021), "<f8", seed=n) for n in (700, 0, 611, 523)]
        names = []
        for i, part in enumerate(parts):
            names.append(f"big{i}.h5")
            self.write_h5(names[-1], {"/m": part.astype(">f8" if i == 2 else "<f8")})
        result = self.xpose(2, "-v", "--memory", "12M", "--concat", "/m", "--axes", "1,0", *names,
                            "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("raw I/O at the datasets' file offsets", result.stderr)
        with h5py.File(self.path("out.h5")) as out:
            np.testing.assert_array_equal(out["m"][...], np.concatenate(parts).T)

    def test_what_cannot_be_joined_is_refused_naming_it(self):
        names, _ = self.matrices(rows=(4, 3))

        def fixed_differs(i, f):
            f["x"][0] = i

        def extra_dataset(i, f):
            if i:
                f["y"] = np.ones(3)

        def other_columns(i, f):
            if i:
                del f["m"]
                f["m"] = np.ones((3, COLS + 1))

        cases = [((), names, "part0.h5 has no dataset whose first axis is unlimited (a record "
                             "dimension) to join the inputs along: name those to join with "
                             "--concat /DATASET[,...]"),
                 (("--concat", "/nothing"), names, "--concat: part0.h5 has no dataset /nothing"),
                 (("--concat", "m"), names, "--concat m: part0.h5 is joined as an HDF5 file "
                                            "(it has groups, strings, user-defined types or axes "
                                            "of no netCDF dimension): name the datasets to join "
                                            "by their paths"),
                 (("--concat", "/m,/x"), names, "part0.h5: /m has 4 records and /x 11 along the "
                                                "first axis the inputs are joined along")]
        for make, message in ((fixed_differs, "a0.h5 and a1.h5 differ: the values of /x"),
                              (extra_dataset, "b0.h5 and b1.h5 differ: /y is in the other, not in "
                                              "the first"),
                              (other_columns, "c0.h5 and c1.h5 differ: dataset /m is records x 11 "
                                              "in the first, records x 12 in the other")):
            changed, _ = self.matrices(rows=(4, 3), extra=make, prefix=message[0])
            cases.append((("--concat", "/m"), changed, message))
        if netCDF4 is not None:
            with netCDF4.Dataset(self.path("classic.nc"), "w", format="NETCDF3_CLASSIC") as nc:
                nc.createDimension("r", 2)
                nc.createVariable("m", "f8", ("r",))[:] = [1, 2]
            cases.append((("--concat", "/m"), [names[0], "classic.nc"],
                          "classic.nc is a netCDF-3 file, which cannot be joined to part0.h5"))
        for args, inputs, message in cases:
            with self.subTest(args=args, message=message):
                result = self.xpose(2, *args, "--axes", "1,0", *inputs, "out.h5")
                self.assertIn(result.returncode, (1, 2), result)
                self.assertEqual(result.stderr.count("xpose: error: "), 1, result)
                self.assertIn(message, result.stderr)
                self.assertFalse(os.path.exists(self.path("out.h5")))
                self.assertEqual(self.leftovers(), [])

    def extendible(self, rows=(4, 3, 5)):
        """h5py's way of appending: /fields/u and /fields/t with an
        unlimited first axis (u compressed, one record a chunk, t the
        record coordinate, a dimension scale), labels of variable length
        joined with them; a fixed grid and names beside."""
        names, u, t, labels = [], [], [], []
        for i, n in enumerate(rows):
            names.append(f"run{i}.h5")
            u.append(np.random.default_rng(i).random((n, 5, 6)) + i)
            t.append(np.arange(n, dtype="f8") + 100 * i)
            labels += [f"step {i}.{k}" for k in range(n)]
            with h5py.File(self.path(names[-1]), "w") as f:
                g = f.create_group("fields")
                g.attrs["model"] = "test"
                g.create_dataset("u", data=u[-1], maxshape=(None, 5, 6), chunks=(1, 5, 6),
                                 compression="gzip", shuffle=True)
                g.create_dataset("t", data=t[-1], maxshape=(None,))
                g["t"].make_scale("t")
                g["u"].dims[0].attach_scale(g["t"])
                f.create_dataset("label", data=strings(labels[len(labels) - n:]), maxshape=(None,))
                f.create_dataset("notes", data=strings(labels[len(labels) - n:] * 2).reshape(2, n).T,
                                 maxshape=(None, 2))  # 2-D, of variable length: copied
                f["grid"] = np.arange(30.0).reshape(5, 6)
                f["names"] = strings(["a", "bb", "ccc"])
                f.attrs["source"] = f"run {i}"
        return names, np.concatenate(u), np.concatenate(t), labels

    def assertJoined(self, name, u, t, labels, time_axis=0):
        with h5py.File(self.path(name)) as out:
            np.testing.assert_array_equal(out["fields/u"][...], u)
            np.testing.assert_array_equal(out["fields/t"][...], t)
            self.assertEqual(list(out["label"].asstr()[...]), labels)
            self.assertEqual(out["notes"].asstr()[...].tolist(), [[x, x] for x in labels])
            self.assertEqual(list(out["names"].asstr()[...]), ["a", "bb", "ccc"])
            np.testing.assert_array_equal(out["grid"][...], np.arange(30.0).reshape(5, 6))
            self.assertEqual(out.attrs["source"], "run 0")
            self.assertEqual(out["fields"].attrs["model"], "test")
            self.assertEqual(out["fields/u"].compression, "gzip")
            self.assertEqual(out["fields/u"].dims[time_axis][0].name, "/fields/t")

    def test_extendible_datasets_joined_alone_and_rearranged(self):
        names, u, t, labels = self.extendible()
        result = self.xpose(2, "--memory", "16K", *names, "alone.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertJoined("alone.h5", u, t, labels)
        with h5py.File(self.path("alone.h5")) as out:
            self.assertEqual(out["fields/u"].chunks, (1, 5, 6))  # the first input's
            self.assertEqual(out["fields/u"].maxshape, (None, 5, 6))
        checked = self.xpose(2, "verify", *names, "alone.h5")
        self.assertEqual(checked.returncode, 0, checked)
        result = self.xpose(2, "--axes", "1,2,0", f"{names[0]}:/fields/u", *names[1:], "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertJoined("out.h5", u.transpose(1, 2, 0), t, labels, time_axis=2)
        checked = self.xpose(2, "verify", "--axes", "1,2,0", f"{names[0]}:/fields/u", *names[1:],
                             "out.h5")
        self.assertEqual(checked.returncode, 0, checked)
        swapped = self.xpose(1, "--force", "--axes", "1,2,0", f"{names[1]}:/fields/u", names[0],
                             "out.h5")
        self.assertEqual(swapped.returncode, 0, swapped)
        self.assertIn("warning: the record coordinate does not increase from run1.h5 to run0.h5",
                      swapped.stderr)
        self.assertEqual(self.leftovers(), [])

    @unittest.skipIf(netCDF4 is None, "python3-netcdf4 is not installed")
    @unittest.skipIf(shutil.which("ncrcat") is None, "nco is not installed")
    def test_netcdf4_files_with_a_group_and_strings_as_ncrcat_then_ncpdq(self):
        names = []
        for i, n in enumerate((4, 3, 5)):
            names.append(f"g{i}.nc")
            with netCDF4.Dataset(self.path(names[-1]), "w") as nc:
                nc.history = f"piece {i}"
                nc.createDimension("time", None)
                nc.createDimension("lat", 3)
                nc.createDimension("lon", 4)
                time = nc.createVariable("time", "f8", ("time",))
                time.units = "days since 2000-01-01"
                time[:] = np.arange(n) + 10 * i
                nc.createVariable("lat", "f4", ("lat",))[:] = [-30, 0, 30]
                nc.createVariable("lon", "f4", ("lon",))[:] = [0, 90, 180, 270]
                tas = nc.createVariable("tas", "f4", ("time", "lat", "lon"), zlib=True,
                                        chunksizes=(1, 3, 4))
                tas.units = "K"
                tas[:] = np.random.default_rng(i).random((n, 3, 4)) + 240
                nc.createVariable("site", str, ("lat",))[:] = np.array(["s", "tt", "uuu"], object)
                ocean = nc.createGroup("ocean")
                sst = ocean.createVariable("sst", "f4", ("time", "lat", "lon"))
                sst.units = "K"
                sst[:] = np.random.default_rng(10 + i).random((n, 3, 4)) + 270
        result = self.xpose(2, "--memory", "16K", "--dims", "lat,lon,time", *names, "out.nc")
        self.assertEqual(result.returncode, 0, result)
        for args in (("ncrcat", "-O", "--no_cll_mth", *names, "joined.nc"),
                     ("ncpdq", "-O", "-a", "lat,lon,time", "joined.nc", "ncpdq.nc")):
            made = subprocess.run(args, cwd=self.dir, capture_output=True, text=True, timeout=120)
            self.assertEqual(made.returncode, 0, made.stderr)
        with netCDF4.Dataset(self.path("out.nc")) as ours, \
                netCDF4.Dataset(self.path("ncpdq.nc")) as theirs:
            for group in ("/", "/ocean"):
                mine, reference = ours[group] if group != "/" else ours, \
                    theirs[group] if group != "/" else theirs
                self.assertEqual(sorted(mine.variables), sorted(reference.variables))
                for name, v in reference.variables.items():
                    with self.subTest(variable=group + name):
                        self.assertEqual(mine[name].dimensions, v.dimensions)
                        self.assertEqual({a: v.getncattr(a) for a in v.ncattrs()},
                                         {a: mine[name].getncattr(a) for a in mine[name].ncattrs()})
                        np.testing.assert_array_equal(mine[name][...], v[...])
            self.assertTrue(ours.dimensions["time"].isunlimited())
            self.assertIn("xpose", ours.history.split("\n")[0])
        checked = self.xpose(2, "verify", *names, "out.nc")
        self.assertEqual(checked.returncode, 0, checked)
        self.assertEqual(self.leftovers(), [])

    def test_stopped_then_resumed(self):
        names, u, t, labels = self.extendible(rows=(40, 40, 40))
        # on the host: a GPU's larger passes may end the run before the stop
        args = ["--backend", "host", "--memory", "8K", "--checkpoint", "0", "--axes", "1,2,0",
                f"{names[0]}:/fields/u", *names[1:], "out.h5"]
        proc = start(2, [XPOSE, *args], cwd=self.dir)
        record = wait_for_record(proc, self.path("out.h5.xpose-partial"),
                                 lambda r: int(r["passes_done"]) >= 5, timeout=60)
        if record is None:
            self.fail(f"the run never got 5 passes done\n{finish(proc)}")
        os.kill(proc.pid, signal.SIGUSR1)
        stopped = finish(proc)
        self.assertEqual(stopped.returncode, 4, stopped)
        resumed = self.xpose(2, "--resume", *args)
        self.assertEqual(resumed.returncode, 0, resumed)
        self.assertIn("(resumed)", resumed.stdout)
        self.assertJoined("out.h5", u.transpose(1, 2, 0), t, labels, time_axis=2)
        self.assertEqual(self.leftovers(), [])


if __name__ == "__main__":
    unittest.main()
