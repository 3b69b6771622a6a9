"""End to end: what xpose publishes opens and edits in the tools climate
and geoscience users run on it.  Format detection by the first bytes
(xarray with no engine, CDO), netCDF-C writing into the file (NCO's
ncatted and ncks -A, netCDF4-python's append mode), ncdump.  Each tool is
skipped, saying so, where it is not installed (jobs/setup.sh installs them
all)."""

import os
import shutil
import subprocess
import unittest

import numpy as np

from harness import ToolTestCase, pattern

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4
    netCDF4 = None
try:
    import xarray
except ImportError:  # Debian's python3-xarray
    xarray = None

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
ROWS, COLS = 37, 23


def run(*args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@unittest.skipIf(netCDF4 is None, "python3-netcdf4 is not installed")
class Tools(ToolTestCase):
    def setUp(self):
        super().setUp()
        self.data = pattern((ROWS, COLS), "<f4")
        with netCDF4.Dataset(self.path("in.nc"), "w") as nc:
            nc.title = "xpose tools test"
            nc.history = "made by the test"
            nc.createDimension("time", None)
            nc.createDimension("station", COLS)
            t = nc.createVariable("time", "f8", ("time",))
            t.units = "hours since 2000-01-01"
            t[:] = np.arange(ROWS) * 6.0
            v = nc.createVariable("tas", "f4", ("time", "station"), fill_value=np.float32(-999))
            v.units = "K"
            v[:] = self.data
        result = self.xpose(2, "--memory", "8K", "in.nc:/tas", "out.nc")  # in passes
        self.assertEqual(result.returncode, 0, result)

    def test_output_starts_with_hdf5s_signature(self):
        # A user block before it hides the format from everything that
        # looks at the first bytes (xarray's engine guess, CDO, file(1)).
        with open(self.path("out.nc"), "rb") as f:
            self.assertEqual(f.read(8), HDF5_SIGNATURE)

    def test_global_attributes_are_kept_and_history_gets_the_command(self):
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            self.assertEqual(nc.title, "xpose tools test")
            first, _, rest = nc.history.partition("\n")
            self.assertRegex(first, r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}: xpose "
                             r"--memory 8K in.nc:/tas out.nc$")
            self.assertEqual(rest, "made by the test")

    def test_the_unlimited_dimension_stays_unlimited_and_grows(self):
        with netCDF4.Dataset(self.path("out.nc"), "a") as nc:
            self.assertTrue(nc.dimensions["time"].isunlimited())
            self.assertFalse(nc.dimensions["station"].isunlimited())
            nc["time"][ROWS] = ROWS * 6.0  # one more record
            self.assertEqual(nc["tas"].shape, (COLS, ROWS + 1))
        if shutil.which("ncdump"):
            result = run("ncdump", "-h", self.path("out.nc"))
            self.assertIn("time = UNLIMITED ; // (%d currently)" % (ROWS + 1), result.stdout)

    @unittest.skipIf(xarray is None, "python3-xarray is not installed")
    def test_xarray_opens_it_with_no_engine_named(self):
        with xarray.open_dataset(self.path("out.nc")) as ds:
            self.assertEqual(ds["tas"].dims, ("station", "time"))
            np.testing.assert_array_equal(ds["tas"].values, self.data.T)

    @unittest.skipIf(shutil.which("cdo") is None, "cdo is not installed")
    def test_cdo_reads_a_time_series_turned_into_time_slices(self):
        # CDO takes only variables whose first dimension is time: give it
        # the transpose the other way, (station, time) -> (time, station).
        with netCDF4.Dataset(self.path("series.nc"), "w") as nc:
            nc.createDimension("station", COLS)
            nc.createDimension("time", ROWS)
            t = nc.createVariable("time", "f8", ("time",))
            t.units = "hours since 2000-01-01"
            t[:] = np.arange(ROWS) * 6.0
            nc.createVariable("tas", "f4", ("station", "time"))[:] = self.data.T
        result = self.xpose(2, "series.nc:/tas", "slices.nc")
        self.assertEqual(result.returncode, 0, result)
        result = run("cdo", "-s", "showformat", self.path("slices.nc"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "NetCDF4")
        result = run("cdo", "-s", "outputf,%g", "-seltimestep,2", self.path("slices.nc"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([np.float32(x) for x in result.stdout.split()], list(self.data[1]))

    @unittest.skipIf(shutil.which("cdo") is None, "cdo is not installed")
    def test_cdo_skips_time_series_and_reads_rechunked_files(self):
        # What the user's guide says of CDO: time must come first for it.
        with netCDF4.Dataset(self.path("slices.nc"), "w") as nc:
            for dim, size in (("time", None), ("lat", 3), ("lon", 4)):
                nc.createDimension(dim, size)
            t = nc.createVariable("time", "f8", ("time",))
            t.units = "hours since 2000-01-01"
            t[:] = np.arange(5) * 6.0
            nc.createVariable("tas", "f4", ("time", "lat", "lon"))[:] = pattern((5, 3, 4), "<f4")
        for args, out in ((("--dims", "lat,lon,time"), "series.nc"),
                          (("--chunks", "time/5,lat/2,lon/2"), "rechunked.nc")):
            result = self.xpose(2, *args, "slices.nc", out)
            self.assertEqual(result.returncode, 0, result)
        result = run("cdo", "-s", "sinfon", self.path("series.nc"))
        self.assertIn("Time must be the first dimension", result.stderr)
        self.assertIn("skipped variable tas", result.stderr)
        result = run("cdo", "-s", "outputf,%g", "-seltimestep,2", "-selname,tas",
                     self.path("rechunked.nc"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([np.float32(x) for x in result.stdout.split()],
                         list(pattern((5, 3, 4), "<f4")[1].ravel()))

    @unittest.skipIf(shutil.which("ncatted") is None, "nco is not installed")
    def test_nco_edits_it_in_place(self):
        out = self.path("out.nc")
        result = run("ncatted", "-a", "units,tas,o,c,degC", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with netCDF4.Dataset(self.path("extra.nc"), "w") as nc:
            nc.createDimension("station", COLS)
            nc.createVariable("elevation", "f4", ("station",))[:] = np.arange(COLS)
        result = run("ncks", "-A", self.path("extra.nc"), out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with netCDF4.Dataset(out) as nc:
            self.assertEqual(nc["tas"].units, "degC")
            np.testing.assert_array_equal(nc["elevation"][:], np.arange(COLS))
            np.testing.assert_array_equal(nc["tas"][:], self.data.T)

    def test_netcdf4_python_appends_to_it(self):
        out = self.path("out.nc")
        with netCDF4.Dataset(out, "a") as nc:
            nc.createVariable("flag", "i4", ("station",))[:] = 1
            nc.history = "edited"
        with netCDF4.Dataset(out) as nc:
            self.assertEqual(nc.history, "edited")
            self.assertEqual(list(nc["flag"][:]), [1] * COLS)
            np.testing.assert_array_equal(nc["tas"][:], self.data.T)
        if shutil.which("ncdump"):
            result = run("ncdump", "-h", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("float tas(station, time)", result.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
