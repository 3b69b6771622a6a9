"""End to end: whole files, as ncpdq and h5repack write them.  The output
is the input with the chosen dataset rearranged and everything else
copied: groups, datasets (in blocks that fit --memory), attributes,
dimension scales, links and named datatypes; --only writes the chosen
dataset alone.  Checked with h5py, netCDF4-python and NCO's ncpdq where
installed."""

import json
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

import h5py
import numpy as np

from harness import XPOSE, ToolTestCase, finish, pattern, start, wait_for_record

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4
    netCDF4 = None

USAGE = 2
TIMES, LATS, LONS, STATIONS = 37, 11, 13, 7


def write_cf(path, times=TIMES):
    """A CF file as netCDF4-python writes them (issue 24's, small): tas
    (time, lat, lon) compressed, one record per chunk; a station series; time
    bounds; a char variable; a string variable; a scalar grid mapping;
    global attributes."""
    tas = pattern((times, LATS, LONS), "<f4")
    with netCDF4.Dataset(path, "w") as nc:
        nc.title = "whole-file test"
        nc.Conventions = "CF-1.8"
        nc.history = "made by the test"
        nc.createDimension("time", None)
        nc.createDimension("lat", LATS)
        nc.createDimension("lon", LONS)
        nc.createDimension("bnds", 2)
        nc.createDimension("station", STATIONS)
        nc.createDimension("name_strlen", 8)
        t = nc.createVariable("time", "f8", ("time",))
        t.units, t.bounds = "days since 2000-01-01", "time_bnds"
        t[:] = np.arange(times)
        nc.createVariable("time_bnds", "f8", ("time", "bnds"))[:] = np.stack(
            [np.arange(times), np.arange(times) + 1], axis=1)
        nc.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-60, 60, LATS)
        nc.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 360, LONS, endpoint=False)
        crs = nc.createVariable("crs", "i4", ())
        crs.grid_mapping_name = "latitude_longitude"
        v = nc.createVariable("tas", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True,
                              chunksizes=(1, LATS, LONS), fill_value=np.float32(1e20))
        v.units, v.grid_mapping, v.coordinates = "K", "crs", "lat lon"
        v[:] = tas
        s = nc.createVariable("tas_stn", "f4", ("time", "station"))
        s[:] = pattern((times, STATIONS), "<f4", seed=3)
        names = nc.createVariable("station_name", "S1", ("station", "name_strlen"))
        names[:] = netCDF4.stringtochar(np.array(["st%d" % i for i in range(STATIONS)], "S8"))
        ids = nc.createVariable("station_id", str, ("station",))  # variable-length strings
        ids.long_name = "station identifier"
        ids[:] = np.array(["id-%d" % (i * i) for i in range(STATIONS)], dtype=object)
    return tas


def netcdf_contents(path):
    """Every variable's dimensions, attributes and values, and the file's
    attributes but history."""
    with netCDF4.Dataset(path) as nc:
        nc.set_auto_maskandscale(False)
        variables = {name: (v.dimensions, {a: v.getncattr(a) for a in v.ncattrs()}, v[...])
                     for name, v in nc.variables.items()}
        globals_ = {a: nc.getncattr(a) for a in nc.ncattrs() if a != "history"}
        unlimited = sorted(d for d, dim in nc.dimensions.items() if dim.isunlimited())
    return variables, globals_, unlimited


@unittest.skipIf(netCDF4 is None, "python3-netcdf4 is not installed")
class NetcdfFiles(ToolTestCase):
    def setUp(self):
        super().setUp()
        self.tas = write_cf(self.path("in.nc"))

    def assertWholeFile(self, out="out.nc"):
        before, before_globals, _ = netcdf_contents(self.path("in.nc"))
        after, after_globals, unlimited = netcdf_contents(self.path(out))
        self.assertEqual(list(after), list(before))  # the input's order: netCDF's variable IDs
        self.assertEqual(after_globals, before_globals)
        self.assertEqual(unlimited, ["time"])
        for name, (dims, attrs, values) in before.items():
            with self.subTest(variable=name):
                out_dims, out_attrs, out_values = after[name]
                if name == "tas":
                    dims, values = ("lat", "lon", "time"), values.transpose(1, 2, 0)
                self.assertEqual(out_dims, dims)
                self.assertEqual(out_attrs.keys(), attrs.keys())
                for key in attrs:
                    np.testing.assert_array_equal(out_attrs[key], attrs[key])
                np.testing.assert_array_equal(out_values, values)
        # CF's references name variables that are there
        with netCDF4.Dataset(self.path(out)) as nc:
            self.assertIn(nc["tas"].grid_mapping, nc.variables)
            self.assertIn(nc["time"].bounds, nc.variables)
            for name in nc["tas"].coordinates.split():
                self.assertIn(name, nc.variables)

    def test_dims_rearranges_the_one_variable_and_copies_the_rest(self):
        # 8 KiB: the copies move in many blocks, the passes too
        result = self.xpose(2, "--memory", "8K", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("in.nc:/tas", result.stdout)
        self.assertWholeFile()
        self.assertEqual(self.leftovers(), [])
        if shutil.which("ncdump"):
            dumped = subprocess.run(["ncdump", self.path("out.nc")], capture_output=True,
                                    text=True, timeout=60)
            self.assertEqual(dumped.returncode, 0, dumped.stderr)

    @unittest.skipIf(shutil.which("ncpdq") is None, "nco is not installed")
    def test_the_same_file_as_ncpdq_but_for_the_record_dimension(self):
        result = self.xpose(3, "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        made = subprocess.run(["ncpdq", "-O", "-a", "lat,lon,time", self.path("in.nc"),
                               self.path("ncpdq.nc")], capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(made.returncode, 0, made.stderr)
        theirs, _, their_unlimited = netcdf_contents(self.path("ncpdq.nc"))
        ours, _, our_unlimited = netcdf_contents(self.path("out.nc"))
        self.assertEqual(sorted(ours), sorted(theirs))
        for name in theirs:
            with self.subTest(variable=name):
                self.assertEqual(ours[name][0], theirs[name][0])
                np.testing.assert_array_equal(ours[name][2], theirs[name][2])
        # ncpdq makes the first dimension the record one; xpose keeps time's
        self.assertEqual((our_unlimited, their_unlimited), (["time"], ["lat"]))

    def test_verify_checks_the_whole_file(self):
        result = self.xpose(2, "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        result = self.xpose(2, "verify", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        with netCDF4.Dataset(self.path("out.nc"), "a") as nc:
            nc["tas_stn"][3, 2] = -1.0  # a copy changed
        result = self.xpose(2, "verify", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 3, result)
        self.assertIn("out.nc:/tas_stn differs from in.nc's", result.stderr)
        result = self.xpose(2, "verify", "--only", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)

    def test_plan_says_what_the_run_does_and_writes_nothing(self):
        options = ("--memory", "8K", "--dims", "lat,lon,time", "in.nc", "out.nc")
        before = sorted(os.listdir(self.dir))
        result = self.xpose(2, "--plan", "--json", *options)
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(sorted(os.listdir(self.dir)), before)  # nothing written, nothing left
        plan = json.loads(result.stdout)
        self.assertEqual((plan["status"], plan["output_state"], plan["ranks"]),
                         ("plan", "new", 2))
        [tas] = plan["rearranged"]
        self.assertEqual((tas["dataset"], tas["input_shape"], tas["output_shape"]),
                         ("/tas", "time x lat x lon (%d x %d x %d)" % (TIMES, LATS, LONS),
                          "lat x lon x time (%d x %d x %d)" % (LATS, LONS, TIMES)))
        self.assertEqual(sorted(c["dataset"] for c in plan["copied"]),
                         ["/bnds", "/crs", "/lat", "/lon", "/name_strlen", "/station",
                          "/station_id", "/station_name", "/tas_stn", "/time", "/time_bnds"])
        self.assertTrue(plan["enough_space"])
        self.assertGreater(plan["estimate_seconds"], 0)
        # the run does what the plan said: its passes, its storage
        result = self.xpose(2, "--json", *options)
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(json.loads(result.stdout)["passes"], tas["moves"][0]["passes"])
        with h5py.File(self.path("out.nc"), "r") as f:
            chunks = " x ".join(map(str, f["tas"].chunks))
        self.assertTrue(tas["storage"].startswith("chunked %s, shuffle+gzip" % chunks), tas)
        # as text, a line for each dataset; an existing output refused as the run refuses it
        result = self.xpose(2, "--plan", "--force", *options)
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("out.nc (exists: --force replaces it)", result.stdout)
        self.assertRegex(result.stdout, r"/tas: time x lat x lon .*: 1 move\(s\): %d pass\(es\)"
                         % tas["moves"][0]["passes"])
        self.assertEqual(result.stdout.count("copied as it is"), 11, result.stdout)
        self.assertRegex(result.stdout, r"space: the output about .* free there\n")
        self.assertRegex(result.stdout, r"time: (about \d+ s|under a second): ")
        result = self.xpose(2, "--plan", *options)
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("output out.nc exists; use --force", result.stderr)

    def test_a_long_record_dimension(self):
        # 19400 records: attaching the copies' scales in parallel failed on
        # one rank of two here (HDF5 1.10.8), and the run hung
        self.tas = write_cf(self.path("in.nc"), times=19400)
        result = self.xpose(2, "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertWholeFile()

    def test_a_named_variable_is_rearranged_and_the_rest_copied(self):
        result = self.xpose(2, "--memory", "8K", "--dims", "lat,lon,time", "in.nc:/tas",
                            "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertWholeFile()

    def test_only_writes_the_variable_and_its_dimensions(self):
        result = self.xpose(2, "--only", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            self.assertEqual(sorted(nc.variables), ["lat", "lon", "tas", "time"])
            np.testing.assert_array_equal(nc["tas"][:], self.tas.transpose(1, 2, 0))

    def add_variables(self, times=TIMES):
        """pr (time, lat, lon), uncompressed, and a field (lat, lon) that
        --dims lat,lon,time leaves in place: ncpdq moves every variable
        with the named dimensions."""
        pr = pattern((times, LATS, LONS), "<f8", seed=5)
        with netCDF4.Dataset(self.path("in.nc"), "a") as nc:
            v = nc.createVariable("pr", "f8", ("time", "lat", "lon"))
            v.units = "kg m-2 s-1"
            v[:] = pr
            nc.createVariable("orog", "f4", ("lat", "lon"))[:] = pattern((LATS, LONS), "<f4")
        return pr

    def assertRearranged(self, pr, out="out.nc"):
        with netCDF4.Dataset(self.path("in.nc")) as nc:
            order = [name for name in nc.variables if name != "station_id"]
        with netCDF4.Dataset(self.path(out)) as nc:  # variable-length data last
            self.assertEqual(list(nc.variables), order + ["station_id"])
            self.assertEqual(nc["pr"].dimensions, ("lat", "lon", "time"))
            self.assertEqual(nc["tas"].dimensions, ("lat", "lon", "time"))
            self.assertEqual(nc["orog"].dimensions, ("lat", "lon"))
            self.assertEqual(nc["pr"].units, "kg m-2 s-1")
            np.testing.assert_array_equal(nc["pr"][:], pr.transpose(1, 2, 0))
            np.testing.assert_array_equal(nc["tas"][:], self.tas.transpose(1, 2, 0))
            np.testing.assert_array_equal(nc["tas_stn"][:],
                                          pattern((len(nc["time"]), STATIONS), "<f4", seed=3))

    def test_dims_rearranges_every_variable_with_the_named_dimensions(self):
        pr = self.add_variables()
        result = self.xpose(2, "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("2 datasets rearranged", result.stdout)
        self.assertRearranged(pr)
        result = self.xpose(2, "verify", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        result = self.xpose(2, "--resume", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("already holds the 2 datasets", result.stdout)
        if shutil.which("ncks"):  # NCO edits it in place
            subprocess.run(["ncatted", "-a", "note,pr,c,c,edited", self.path("out.nc")],
                           check=True, timeout=60)
            with netCDF4.Dataset(self.path("out.nc")) as nc:
                self.assertEqual(nc["pr"].note, "edited")

    def test_a_wrong_second_variable_fails_verify(self):
        pr = self.add_variables()
        self.assertEqual(self.xpose(2, "--dims", "lat,lon,time", "in.nc", "out.nc").returncode, 0)
        with h5py.File(self.path("out.nc"), "r+") as f:
            f["tas"][3, 4, 5] += 1
        result = self.xpose(2, "verify", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 3, result)
        self.assertIn("/tas", result.stderr)
        del pr

    def test_a_missing_output_dataset_is_not_the_transpose(self):
        self.add_variables()
        self.assertEqual(self.xpose(2, "--dims", "lat,lon,time", "in.nc", "out.nc").returncode, 0)
        with h5py.File(self.path("out.nc"), "r+") as f:
            del f["tas"]
        result = self.xpose(2, "verify", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 3, result)  # not an error reading it (1)
        self.assertIn("out.nc has no dataset /tas", result.stderr)

    def test_a_variable_of_several_moves_is_moved_with_the_others(self):
        with netCDF4.Dataset(self.path("in.nc"), "a") as nc:
            nc.createDimension("lev", 3)
            shape = tuple(len(nc.dimensions[d]) for d in ("time", "lev", "lat", "lon"))
            ta = (np.arange(np.prod(shape), dtype="f4").reshape(shape) + 0.5)
            nc.createVariable("ta", "f4", ("time", "lev", "lat", "lon"))[:] = ta
        # ncpdq's rule makes ta (lat, lev, lon, time): two moves, through a scratch file
        result = self.xpose(2, "--memory", "64K", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            self.assertEqual(nc["ta"].dimensions, ("lat", "lev", "lon", "time"))
            self.assertTrue(nc.dimensions["time"].isunlimited())
            np.testing.assert_array_equal(nc["ta"][:], ta.transpose(2, 1, 3, 0))
            self.assertEqual(nc["tas"].dimensions, ("lat", "lon", "time"))
        result = self.xpose(2, "verify", "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(self.leftovers(), [])

    def test_an_output_dataset_named_for_several_is_refused_first(self):
        self.add_variables()
        result = self.xpose(2, "--dims", "lat,lon,time", "in.nc", "out.nc:/tas_t")
        self.assertEqual(result.returncode, USAGE, result)
        self.assertIn("give the output file alone", result.stderr)
        self.assertFalse(os.path.exists(self.path("out.nc")))

    def test_dims_that_reorder_nothing_or_name_no_axis_are_refused(self):
        result = self.xpose(2, "--dims", "time,lat", "in.nc", "out.nc")
        self.assertEqual(result.returncode, USAGE, result)
        self.assertIn("reorders no dataset of in.nc", result.stderr)
        result = self.xpose(2, "--dims", "lat,lon,tim", "in.nc", "out.nc")
        self.assertEqual(result.returncode, USAGE, result)
        self.assertIn("no dataset of in.nc has an axis named 'tim'", result.stderr)
        self.assertFalse(os.path.exists(self.path("out.nc")))
        self.assertEqual(self.leftovers(), [])

    def test_a_named_variable_alone_is_rearranged(self):
        pr = self.add_variables()
        result = self.xpose(2, "--dims", "lat,lon,time", "in.nc:/tas", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            self.assertEqual(nc["pr"].dimensions, ("time", "lat", "lon"))
            np.testing.assert_array_equal(nc["pr"][:], pr)

    def test_a_run_of_several_variables_stopped_in_the_second_resumes(self):
        self.tas = write_cf(self.path("in.nc"), times=400)
        pr = self.add_variables(times=400)
        args = ["--memory", "16K", "--checkpoint", "0", "--dims", "lat,lon,time", "in.nc",
                "out.nc"]
        proc = start(2, [XPOSE, *args], cwd=self.dir)
        partial = self.path("out.nc.xpose-partial")
        wait_for_record(proc, partial, lambda r: r["variables"].split()[1] == "1" and
                        int(r["passes_done"]) >= 3)
        os.kill(proc.pid, signal.SIGUSR1)
        result = finish(proc)
        if result.returncode == 0:
            self.skipTest("the run ended before the stop reached it")
        self.assertEqual(result.returncode, 4, result)
        self.assertIn("1 of 2 datasets and", result.stderr)
        result = self.xpose(2, "--resume", *args)
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("(resumed)", result.stdout)
        self.assertRearranged(pr)
        self.assertEqual(self.leftovers(), [])

    def test_a_stopped_whole_file_run_resumes(self):
        # passes of whole output chunks (lat x lon x 1), so that they resume
        self.tas = write_cf(self.path("in.nc"), times=500)
        args = ["--memory", "16K", "--checkpoint", "0", "--dims", "lat,lon,time", "in.nc",
                "out.nc"]
        proc = start(2, [XPOSE, *args], cwd=self.dir)
        partial = self.path("out.nc.xpose-partial")
        wait_for_record(proc, partial, lambda r: int(r["passes_done"]) >= 3)
        os.kill(proc.pid, signal.SIGUSR1)
        result = finish(proc)
        if result.returncode == 0:
            self.skipTest("the run ended before the stop reached it")
        self.assertEqual(result.returncode, 4, result)
        result = self.xpose(2, "--resume", *args)
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("(resumed)", result.stdout)
        self.assertWholeFile()
        self.assertEqual(self.leftovers(), [])


class HdfFiles(ToolTestCase):
    def setUp(self):
        super().setUp()
        self.matrix = pattern((29, 17), "<i4")
        with h5py.File(self.path("in.h5"), "w", track_order=True) as f:
            f.attrs["origin"] = "test"
            f.create_dataset("matrix", data=self.matrix)
            g = f.create_group("deep/er", track_order=True)
            g.attrs["note"] = np.arange(3)
            g.create_dataset("series", data=pattern((5000,), "<f8", seed=1), chunks=(700,),
                             compression="gzip")
            g.create_dataset("cube", data=pattern((6, 7, 8), "<u2", seed=2), chunks=(2, 7, 3))
            g.create_dataset("scalar", data=np.float32(2.5))
            g.create_dataset("empty", shape=(0, 4), dtype="<i8")
            g.create_dataset("unwritten", shape=(9,), dtype="<f4", fillvalue=-1)
            space = h5py.h5s.create_simple((4,))
            plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            plist.set_layout(h5py.h5d.COMPACT)
            h5py.h5d.create(g.id, b"compact", h5py.h5t.STD_I16LE, space, dcpl=plist).write(
                h5py.h5s.ALL, h5py.h5s.ALL, np.arange(4, dtype="<i2"))
            f["deep/er/typed"] = np.dtype([("a", "<i4"), ("b", "<f8")])
            records = f.create_dataset("records", (2,), dtype=f["deep/er/typed"])
            records[...] = np.array([(1, 2.0), (3, 4.0)], records.dtype)
            x = f.create_dataset("x", data=np.arange(17.0))
            x.make_scale("x")
            series = g.create_dataset("on_x", data=pattern((3, 17), "<f4", seed=4))
            series.dims[1].attach_scale(x)
            f["alias"] = g["cube"]  # a second hard link
            f["soft"] = h5py.SoftLink("/deep/er/series")
            f["elsewhere"] = h5py.ExternalLink("other.h5", "/data")

    def test_every_object_is_copied_as_it_was(self):
        result = self.xpose(3, "--memory", "4K", "in.h5:/matrix", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/matrix", "out.h5", "/matrix")
        with h5py.File(self.path("in.h5"), "r") as a, h5py.File(self.path("out.h5"), "r") as b:
            self.assertEqual(b.attrs["origin"], "test")
            np.testing.assert_array_equal(b["deep/er"].attrs["note"], np.arange(3))
            for name in ("deep/er/series", "deep/er/cube", "deep/er/scalar", "deep/er/empty",
                         "deep/er/unwritten", "deep/er/compact", "records", "x", "deep/er/on_x"):
                with self.subTest(dataset=name):
                    self.assertEqual(b[name].dtype, a[name].dtype)
                    self.assertEqual(b[name].shape, a[name].shape)
                    np.testing.assert_array_equal(b[name][()], a[name][()])
                    self.assertEqual(b[name].chunks, a[name].chunks)
                    self.assertEqual(b[name].compression, a[name].compression)
            self.assertEqual(b["deep/er/unwritten"].fillvalue, -1)
            self.assertIsInstance(b["deep/er/typed"], h5py.Datatype)
            self.assertTrue(a["records"].id.get_type().committed())
            self.assertTrue(b["records"].id.get_type().committed())
            self.assertEqual(b["alias"].id, b["deep/er/cube"].id)  # one object, two names
            self.assertEqual(b.get("soft", getlink=True).path, "/deep/er/series")
            link = b.get("elsewhere", getlink=True)
            self.assertEqual((link.filename, link.path), ("other.h5", "/data"))
            self.assertTrue(h5py.h5ds.is_scale(b["x"].id))
            self.assertEqual(b["deep/er/on_x"].dims[1][0].name, "/x")
            self.assertEqual(list(b), list(a))  # in the input's order (matrix first there)
            # history is netCDF's (NCO's) convention: a plain HDF5 file gets none
            self.assertEqual(sorted(b.attrs), ["origin"])
        self.assertEqual(self.leftovers(), [])

    def test_plan_of_several_moves_and_raw_passes_is_what_the_run_does(self):
        # the cube's order takes two moves through a scratch file; the
        # matrix alone, contiguous and large enough, moves raw
        for dataset, options in (("/deep/er/cube", ("--axes", "2,1,0", "--memory", "2K")),
                                 ("/matrix", ("-m", "16M"))):
            if dataset == "/matrix":
                with h5py.File(self.path("in.h5"), "a") as f:
                    del f["matrix"]
                    f["matrix"] = pattern((1000, 1200), "<f4")
            with self.subTest(dataset=dataset):
                args = (*options, "in.h5:" + dataset, "out.h5")
                planned = self.xpose(3, "--plan", "--json", "--force", *args)
                self.assertEqual(planned.returncode, 0, planned)
                [plan] = json.loads(planned.stdout)["rearranged"]
                ran = self.xpose(3, "--json", "-v", "--force", *args)
                self.assertEqual(ran.returncode, 0, ran)
                self.assertEqual(sum(m["passes"] for m in plan["moves"]),
                                 json.loads(ran.stdout)["passes"])
                self.assertEqual(plan["moves"][-1]["io"] == "raw", "raw I/O" in ran.stderr)
                self.assertEqual([m["io"] for m in plan["moves"]],
                                 ["mpi-io", "mpi-io"] if dataset != "/matrix" else ["raw"])

    def test_a_disk_too_small_for_the_copies_fails_before_writing_them(self):
        with h5py.File(self.path("in.h5"), "a") as f:
            f["big"] = pattern((1000, 800), "<f8", seed=6)  # 6.1 MiB, the matrix 2 KiB
        with self.small_file_system("4m") as mnt:
            out = os.path.join(mnt, "out.h5")
            for ranks in (1, 3):
                with self.subTest(ranks=ranks):
                    result = self.xpose(ranks, "in.h5:/matrix", out)
                    self.assertEqual(result.returncode, 1, result)
                    self.assertRegex(result.stderr, rf"xpose: error: not enough space for {out}: "
                                     rf"it needs 6.\d+ MiB and {mnt} has")
                    self.assertEqual(result.stderr.count("xpose: error:"), 1, result)
                    self.assertEqual(os.listdir(mnt), [])

    def test_a_copy_the_file_system_loses_fails_verification(self):
        with h5py.File(self.path("in.h5"), "a") as f:
            f["big"] = pattern((256, 1024), "<f8", seed=5)
        lose = {"LD_PRELOAD": os.environ["XPOSE_WRITE_FAULT"], "WRITE_FAULT_PATH": "out.h5",
                "WRITE_FAULT_AFTER": "16384", "WRITE_FAULT_LOSE": "1",
                "WRITE_FAULT_LOSE_BYTES": "65536"}  # in the copies, written first
        result = self.xpose(1, "--memory", "64K", "in.h5:/matrix", "out.h5", env=lose)
        self.assertEqual(result.returncode, 3, result)
        self.assertIn("read back from storage, differs from its source in in.h5", result.stderr)
        self.assertEqual(result.stderr.count("xpose: error:"), 1, result)
        self.assertFalse(os.path.exists(self.path("out.h5")))
        self.assertEqual(self.leftovers(), [])

    def add_variable_length(self):
        """Strings and sequences as h5py writes them, one with a second name,
        one on a dimension scale, one chunked and compressed, and references,
        which point into the input."""
        words = np.array(["a", "bb", "", "dddd" * 50, "é"], dtype=object)
        with h5py.File(self.path("in.h5"), "a") as f:
            names = f.create_dataset("names", data=words, dtype=h5py.string_dtype())
            names.attrs["note"] = "strings"
            f["names_again"] = names
            ragged = f.create_dataset("deep/ragged", (4,), dtype=h5py.vlen_dtype("<i4"),
                                      chunks=(2,), compression="gzip")
            for i in range(4):
                ragged[i] = np.arange(i * 3, dtype="<i4")
            on_x = f.create_dataset("labels_on_x", data=np.array(["x%d" % i for i in range(17)],
                                                                  dtype=object),
                                    dtype=h5py.string_dtype())
            on_x.dims[0].attach_scale(f["x"])
        return words

    def test_variable_length_data_is_copied_by_rank_0(self):
        words = self.add_variable_length()
        result = self.xpose(2, "in.h5:/matrix", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertEqual(list(f["names"].asstr()[...]), list(words))
            self.assertEqual(f["names"].attrs["note"], "strings")
            self.assertEqual(f["names_again"].id, f["names"].id)  # one object, two names
            for i in range(4):
                np.testing.assert_array_equal(f["deep/ragged"][i], np.arange(i * 3))
            self.assertEqual(f["deep/ragged"].compression, "gzip")
            self.assertEqual(f["labels_on_x"].dims[0][0].name, "/x")
        result = self.xpose(2, "verify", "in.h5:/matrix", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("out.h5"), "r+") as f:
            f["names"][3] = "dddd" * 49 + "dddx"
        result = self.xpose(2, "verify", "in.h5:/matrix", "out.h5")
        self.assertEqual(result.returncode, 3, result)
        self.assertIn("/names", result.stderr)

    def test_a_stop_during_the_copies_ends_the_run_at_once(self):
        with h5py.File(self.path("in.h5"), "a") as f:
            f.create_dataset("big", data=pattern((2048, 4096), "<f8", seed=6))  # 64 MiB
        # blocks of 64 KiB: a thousand collective writes to copy it
        proc = start(2, [XPOSE, "--memory", "64K", "in.h5:/matrix", "out.h5"], cwd=self.dir)
        partial = self.path("out.h5.xpose-partial")
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None and not (
                os.path.exists(partial) and os.path.getsize(partial) > (4 << 20)):
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGUSR1)
        stopped_at = time.time()
        result = finish(proc)
        if result.returncode == 0:
            self.skipTest("the copies ended before the stop reached them")
        self.assertEqual(result.returncode, 4, result)
        self.assertLess(time.time() - stopped_at, 20, "the copy went on after the stop")
        self.assertIn("stopped by SIGUSR1 before any pass was done; nothing was kept",
                      result.stderr)
        self.assertFalse(os.path.exists(self.path("out.h5")))
        self.assertEqual(self.leftovers(), [])

    def test_references_are_refused_unless_only(self):
        with h5py.File(self.path("in.h5"), "a") as f:
            f.create_dataset("pointers", data=[f["matrix"].ref], dtype=h5py.ref_dtype)
        result = self.xpose(2, "in.h5:/matrix", "out.h5")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("in.h5:/pointers holds references", result.stderr)
        self.assertIn("--only", result.stderr)
        self.assertEqual(result.stderr.count("xpose: error:"), 1, result)
        self.assertFalse(os.path.exists(self.path("out.h5")))
        self.assertEqual(self.leftovers(), [])
        result = self.xpose(2, "--only", "in.h5:/matrix", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertEqual(list(f), ["matrix"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
