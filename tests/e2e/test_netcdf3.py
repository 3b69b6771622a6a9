"""End to end: netCDF-3 inputs (classic, 64-bit offset, CDF-5) written by
netCDF4-python, rearranged into netCDF-4 files, every variable, attribute
and dimension checked with netCDF4-python, the independent reader: values
in the new order, the record dimension still unlimited, the rest as it
was.  Skipped where python3-netcdf4 is missing, or xpose was built without
netCDF-C (it then refuses them, which test_errors checks)."""

import os
import random
import signal
import subprocess
import unittest

import numpy as np

from harness import XPOSE, ToolTestCase, finish, start, wait_for_record

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4
    netCDF4 = None

FORMATS = ("NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA")
STOPPED = 4


def reads_netcdf3():
    probe = subprocess.run(["ldd", XPOSE], capture_output=True, text=True)
    return "netcdf" in probe.stdout


@unittest.skipIf(netCDF4 is None, "python3-netcdf4 is not installed")
@unittest.skipUnless(reads_netcdf3(), "this xpose is built without netCDF-C")
class NetCDF3Inputs(ToolTestCase):
    def write_climate(self, name, fmt, records=37, lat=19, lon=23, seed=1):
        """A CF-like file: time unlimited, time_bnds, two record variables
        of different types, a fixed one, attributes and fill values."""
        rng = np.random.default_rng(seed)
        with netCDF4.Dataset(self.path(name), "w", format=fmt) as nc:
            nc.title, nc.history = "xpose netCDF-3 test", "made by the test"
            nc.createDimension("time", None)
            nc.createDimension("lat", lat)
            nc.createDimension("lon", lon)
            nc.createDimension("nv", 2)
            t = nc.createVariable("time", "f8", ("time",))
            t.units = "days since 2000-01-01"
            nc.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-90, 90, lat)
            nc.createVariable("lon", "f4", ("lon",))[:] = np.arange(lon) * 360.0 / lon
            bounds = nc.createVariable("time_bnds", "f8", ("time", "nv"))
            tas = nc.createVariable("tas", "f4", ("time", "lat", "lon"), fill_value=1e20)
            tas.units = "K"
            pr = nc.createVariable("pr", "i2", ("time", "lat", "lon"))
            pr.scale_factor = 0.1
            nc.createVariable("orog", "f8", ("lat", "lon"))[:] = rng.random((lat, lon))
            t[:] = np.arange(records)
            bounds[:] = np.stack([np.arange(records), np.arange(records) + 1], 1)
            tas[:] = rng.random((records, lat, lon), dtype=np.float32) * 300
            pr.set_auto_maskandscale(False)
            pr[:] = rng.integers(-30000, 30000, (records, lat, lon), dtype=np.int16)

    def assertRearranged(self, in_name, out_name):
        """Each variable of out is in's in out's order of its dimensions."""
        with netCDF4.Dataset(self.path(in_name)) as a, netCDF4.Dataset(self.path(out_name)) as b:
            a.set_auto_maskandscale(False)
            b.set_auto_maskandscale(False)
            self.assertEqual(b.file_format, "NETCDF4")
            self.assertEqual({k: len(d) for k, d in a.dimensions.items()},
                             {k: len(d) for k, d in b.dimensions.items()})
            self.assertEqual({k for k, d in a.dimensions.items() if d.isunlimited()},
                             {k for k, d in b.dimensions.items() if d.isunlimited()})
            self.assertEqual(set(a.variables), set(b.variables))
            for name, v in a.variables.items():
                w = b.variables[name]
                order = [v.dimensions.index(d) for d in w.dimensions]
                self.assertEqual(sorted(order), list(range(v.ndim)), name)
                x, y = v[:], w[:]
                self.assertEqual(x.dtype, y.dtype, name)
                self.assertTrue(np.array_equal(np.transpose(x, order), y), name)
                self.assertEqual({k: str(v.getncattr(k)) for k in v.ncattrs()},
                                 {k: str(w.getncattr(k)) for k in w.ncattrs()}, name)
            self.assertEqual({k: str(a.getncattr(k)) for k in a.ncattrs() if k != "history"},
                             {k: str(b.getncattr(k)) for k in b.ncattrs() if k != "history"})
            if "history" in a.ncattrs():  # NCO's way: the command, then the old history
                self.assertTrue(b.history.endswith("\n" + a.history), b.history)

    def test_each_format_permuted_as_ncpdq_would(self):
        # 4 ranks of 3 records: some own nothing; 8K passes: many of them.
        for fmt in FORMATS:
            for ranks, records, memory in ((1, 37, None), (4, 3, "8K")):
                with self.subTest(format=fmt, ranks=ranks):
                    self.write_climate("in.nc", fmt, records)
                    extra = ("--memory", memory) if memory else ()
                    result = self.xpose(ranks, *extra, "--dims", "lat,lon,time", "in.nc", "out.nc")
                    self.assertEqual(result.returncode, 0, result)
                    self.assertIn("2 datasets rearranged", result.stdout)
                    self.assertRearranged("in.nc", "out.nc")
                    with netCDF4.Dataset(self.path("out.nc")) as nc:
                        self.assertEqual(nc["tas"].dimensions, ("lat", "lon", "time"))
                    self.assertEqual(self.leftovers(), [])
                    os.remove(self.path("out.nc"))

    def test_every_type_and_a_lone_record_variable(self):
        # CDF-5's types; a lone record variable's records are not padded
        # to 4 bytes (3 x 5 int16 values: 30 bytes apart, not 32).
        types = ("i1", "u1", "S1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8")
        rng = np.random.default_rng(3)
        with netCDF4.Dataset(self.path("in.nc"), "w", format="NETCDF3_64BIT_DATA") as nc:
            nc.createDimension("t", None)
            nc.createDimension("y", 3)
            nc.createDimension("x", 5)
            for k, code in enumerate(types):
                v = nc.createVariable(f"v{k}", code, ("y", "x"))
                v[:] = (rng.integers(0, 255, (3, 5)).astype("u1").view("S1") if code == "S1" else
                        (rng.random((3, 5)) * 100).astype(code))
            nc.createVariable("r", "i2", ("t", "y", "x"))[:] = np.arange(7 * 15).reshape(7, 3, 5)
        result = self.xpose(2, "--dims", "x,y,t", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertRearranged("in.nc", "out.nc")

    def test_one_variable_four_axes_and_rechunking(self):
        # A fixed-size variable alone (a transpose), a 4-D record variable
        # reversed (more than one move), and rechunking (nccopy -c).
        with netCDF4.Dataset(self.path("in.nc"), "w", format="NETCDF3_64BIT_OFFSET") as nc:
            for dim, size in (("time", None), ("lev", 3), ("lat", 7), ("lon", 11)):
                nc.createDimension(dim, size)
            nc.createVariable("orog", "f8", ("lat", "lon"))[:] = np.arange(77.0).reshape(7, 11)
            nc.createVariable("ta", "f4", ("time", "lev", "lat", "lon"))[:] = (
                np.arange(5 * 3 * 7 * 11, dtype="f4").reshape(5, 3, 7, 11))
        with netCDF4.Dataset(self.path("in.nc")) as nc:
            orog, ta = nc["orog"][:], nc["ta"][:]
        result = self.xpose(2, "in.nc:/orog", "orog.nc")
        self.assertEqual(result.returncode, 0, result)
        with netCDF4.Dataset(self.path("orog.nc")) as nc:
            self.assertTrue(np.array_equal(nc["orog"][:], orog.T))
        result = self.xpose(3, "--dims", "lon,lat,lev,time", "in.nc", "ta.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertRearranged("in.nc", "ta.nc")
        result = self.xpose(2, "--chunks", "time/5,lat/4,lon/4", "in.nc", "rechunked.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertRearranged("in.nc", "rechunked.nc")
        with netCDF4.Dataset(self.path("rechunked.nc")) as nc:
            self.assertEqual(nc["ta"].chunking(), [5, 3, 4, 4])
            self.assertTrue(np.array_equal(nc["ta"][:], ta))
        self.assertEqual(self.leftovers(), [])

    def test_stop_then_resume(self):
        self.write_climate("in.nc", "NETCDF3_CLASSIC", records=300, lat=16, lon=32)
        args = [XPOSE, "--memory", "16K", "--checkpoint", "0", "--dims", "lat,lon,time",
                "in.nc", "out.nc"]
        proc = start(2, args, cwd=self.dir)
        partial = self.path("out.nc.xpose-partial")
        record = wait_for_record(proc, partial, lambda r: int(r["passes_done"]) >= 2, 60, 0.01)
        if record is None:
            self.fail(f"no pass was recorded\n{finish(proc)}")
        os.kill(proc.pid, signal.SIGUSR1)
        result = finish(proc)
        self.assertEqual(result.returncode, STOPPED, result)
        self.assertFalse(os.path.exists(self.path("out.nc")))
        self.assertFalse(os.path.exists(self.path("out.nc.xpose-netcdf4")))
        result = self.xpose(3, "--resume", *args[1:])
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("(resumed)", result.stdout)
        self.assertRearranged("in.nc", "out.nc")
        self.assertEqual(self.leftovers(), [])

    def test_refusals(self):
        self.write_climate("in.nc", "NETCDF3_CLASSIC", records=4)
        result = self.xpose(2, "--dims", "lat,lon,time", "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        result = self.xpose(2, "verify", "--dims", "lat,lon,time", "in.nc", "out.nc")  # its view
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(self.leftovers(), [])
        size = os.path.getsize(self.path("in.nc"))
        os.truncate(self.path("in.nc"), size - 100)
        result = self.xpose(2, "--dims", "lat,lon,time", "in.nc", "cut.nc")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("in.nc: variable pr lies past the file's end", result.stderr)
        self.assertFalse(os.path.exists(self.path("cut.nc")))
        self.assertEqual(self.leftovers(), [])

    def test_damaged_headers_through_the_tool(self):
        # The tool's side of test_netcdf3_headers (1500 cases in process):
        # bytes of a header changed or the file cut, each run refused
        # (exit 1 or 2, one message naming the file) or rearranged as
        # netCDF-C reads the damaged file; never a signal or a hang.
        rng = random.Random(20261129)
        outcomes = {}
        for case in range(30):
            fmt = FORMATS[case % 3]
            self.write_climate("seed.nc", fmt, records=4, lat=3, lon=5)
            with open(self.path("seed.nc"), "rb") as f:
                data = bytearray(f.read())
            with netCDF4.Dataset(self.path("seed.nc")) as nc:
                values = sum(v.size * v.dtype.itemsize for v in nc.variables.values())
            if rng.random() < 0.2:
                data = data[:rng.randrange(len(data))]
            else:
                for _ in range(rng.randint(1, 4)):
                    data[rng.randrange(len(data) - values)] = rng.choice(
                        (0, 0xFF, rng.randrange(256)))
            with open(self.path("in.nc"), "wb") as f:
                f.write(data)
            with self.subTest(case=case, format=fmt):
                result = self.xpose(1, "--dims", "lat,lon,time", "in.nc", "out.nc", timeout=120)
                outcomes[result.returncode] = outcomes.get(result.returncode, 0) + 1
                self.assertIn(result.returncode, (0, 1, 2), result)
                if result.returncode == 0:
                    self.assertRearranged("in.nc", "out.nc")
                    os.remove(self.path("out.nc"))
                else:
                    self.assertEqual(result.stderr.count("xpose: error: "), 1, result)
                    self.assertIn("in.nc", result.stderr)
                    self.assertFalse(os.path.exists(self.path("out.nc")))
                self.assertEqual(self.leftovers(), [])
        self.assertGreater(outcomes.get(0, 0), 0, outcomes)  # some damage is harmless


if __name__ == "__main__":
    unittest.main()
