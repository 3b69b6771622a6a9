"""End to end: several netCDF files joined along their record dimension
into one output (as ncrcat joins them), rearranged (as ncpdq) or
rechunked in the same run: files of each format (netCDF-4 compressed,
netCDF-3 classic and CDF-5), given on the command line or by --inputs,
checked against ncrcat followed by ncpdq, or joined alone as ncrcat joins
them, and checked again by `xpose verify IN1 ... OUT`; files with no record
dimension joined along a fixed one (--concat), against ncks --mk_rec_dmn,
ncrcat and ncpdq, and the wrong dimensions refused; inputs that differ refused
naming both files and the variable; a file out of order warned of; more
inputs than are kept open at once; a stopped run resumed, and one whose
inputs changed refused.  Skipped where python3-netcdf4 or NCO is
missing, or xpose was built without netCDF-C."""

import os
import shutil
import signal
import subprocess
import unittest

import numpy as np

from harness import XPOSE, ToolTestCase, finish, start, wait_for_record

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4
    netCDF4 = None

LAT, LON, STATIONS = 7, 9, 5
FORMATS = ("NETCDF4", "NETCDF3_CLASSIC", "NETCDF3_64BIT_DATA")


def reads_netcdf():
    probe = subprocess.run(["ldd", XPOSE], capture_output=True, text=True)
    return "netcdf" in probe.stdout


def write_piece(path, first, records, fmt="NETCDF4", orog_offset=0.0, seed=0, compress=True,
                fixed_time=False):
    """Records [first, first + records) of a daily CF series: tas(time, lat,
    lon) (compressed, one record a chunk, in netCDF-4), a station series,
    time bounds, fixed coordinates, station names and orography."""
    rng = np.random.default_rng(first + seed)
    with netCDF4.Dataset(path, "w", format=fmt) as nc:
        nc.title, nc.history = "join test", f"piece from {first}"
        nc.createDimension("time", records if fixed_time else None)
        nc.createDimension("lat", LAT)
        nc.createDimension("lon", LON)
        nc.createDimension("station", STATIONS)
        nc.createDimension("bnds", 2)
        t = nc.createVariable("time", "f8", ("time",))
        t.units, t.bounds = "days since 2000-01-01", "time_bnds"
        nc.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-60, 60, LAT)
        nc.createVariable("lon", "f4", ("lon",))[:] = np.arange(LON) * 40.0
        bounds = nc.createVariable("time_bnds", "f8", ("time", "bnds"))
        extra = {"zlib": compress, "shuffle": compress, "chunksizes": (1, LAT, LON)} \
            if fmt == "NETCDF4" else {}
        tas = nc.createVariable("tas", "f4", ("time", "lat", "lon"), fill_value=1e20, **extra)
        tas.units = "K"
        stn = nc.createVariable("tas_stn", "f4", ("time", "station"))
        nc.createDimension("name_strlen", 6)
        names = nc.createVariable("station_name", "S1", ("station", "name_strlen"))
        names[:] = netCDF4.stringtochar(np.array([f"stn{i:03d}" for i in range(STATIONS)], "S6"))
        orog = nc.createVariable("orog", "f8", ("lat", "lon"))
        orog[:] = np.arange(LAT * LON).reshape(LAT, LON) + orog_offset
        days = np.arange(first, first + records, dtype="f8")
        t[:] = days
        bounds[:] = np.stack([days, days + 1], 1)
        tas[:] = (rng.random((records, LAT, LON)) * 60 + 240).astype("f4")
        stn[:] = (rng.random((records, STATIONS)) * 60 + 240).astype("f4")


def contents(path):
    """Every variable's dimensions and values, its attributes, and the
    unlimited dimensions."""
    with netCDF4.Dataset(path) as nc:
        nc.set_auto_maskandscale(False)
        variables = {name: (v.dimensions, {a: str(v.getncattr(a)) for a in v.ncattrs()}, v[...])
                     for name, v in nc.variables.items()}
        unlimited = sorted(d for d, dim in nc.dimensions.items() if dim.isunlimited())
    return variables, unlimited


@unittest.skipIf(netCDF4 is None, "python3-netcdf4 is not installed")
@unittest.skipUnless(reads_netcdf(), "this xpose is built without netCDF-C")
class Joined(ToolTestCase):
    def pieces(self, sizes=(10, 0, 7, 12), formats=FORMATS):
        names, first = [], 0
        for i, records in enumerate(sizes):
            names.append(f"piece{i}.nc")
            write_piece(self.path(names[-1]), first, records, formats[i % len(formats)])
            first += records
        return names

    def nco(self, *args):
        made = subprocess.run(list(args), cwd=self.dir, capture_output=True, text=True, timeout=120)
        self.assertEqual(made.returncode, 0, made.stderr)

    def assertSameAs(self, ours, theirs, our_unlimited=("time",)):
        mine, unlimited = contents(self.path(ours))
        reference, _ = contents(self.path(theirs))
        self.assertEqual(sorted(mine), sorted(reference))
        for name, (dims, attrs, values) in reference.items():
            with self.subTest(variable=name):
                self.assertEqual(mine[name][0], dims)
                self.assertEqual(mine[name][1], attrs)
                np.testing.assert_array_equal(mine[name][2], values)
        self.assertEqual(unlimited, list(our_unlimited))

    @unittest.skipIf(shutil.which("ncrcat") is None, "nco is not installed")
    def test_time_series_of_several_files_as_ncrcat_then_ncpdq(self):
        # every format, an input of no records, 3 ranks of which some own
        # nothing in the small passes
        names = self.pieces()
        result = self.xpose(3, "--memory", "16K", "--dims", "lat,lon,time", *names, "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("(4 inputs joined)", result.stdout)
        # ncrcat refuses an input of no records: the others are the same join
        self.nco("ncrcat", "-O", "--no_cll_mth", names[0], *names[2:], "joined.nc")
        self.nco("ncpdq", "-O", "-a", "lat,lon,time", "joined.nc", "ncpdq.nc")
        # ncpdq makes the first dimension the record one; xpose keeps time's
        self.assertSameAs("out.nc", "ncpdq.nc")
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            self.assertTrue(nc.history.startswith(nc.history.split("\n")[0]))
            self.assertIn("xpose", nc.history.split("\n")[0])
            self.assertEqual(nc["tas"].filters()["zlib"], True)  # the first input's storage
        self.assertEqual(self.leftovers(), [])
        # `xpose verify IN1 ... OUT` reads the inputs joined as the run did
        checked = self.xpose(2, "verify", *names, "out.nc")
        self.assertEqual(checked.returncode, 0, checked)
        self.assertIn("holds the 3 datasets of", checked.stdout)
        swapped = self.xpose(2, "verify", names[2], names[0], *names[3:], "out.nc")
        self.assertEqual(swapped.returncode, 3, swapped)
        self.assertEqual(self.leftovers(), [])

    @unittest.skipIf(shutil.which("ncrcat") is None, "nco is not installed")
    def test_inputs_listed_in_a_file_and_rechunked(self):
        names = self.pieces(sizes=(5, 6, 4))
        with open(self.path("list.txt"), "w") as f:
            f.write("\n".join(names[1:]) + "\n\n")
        self.nco("ncrcat", "-O", "--no_cll_mth", *names, "joined.nc")
        planned = self.xpose(2, "--plan", "--chunks", "time/15,lat/4,lon/4", names[0], "--inputs",
                             "list.txt", "out.nc")
        self.assertEqual(planned.returncode, 0, planned)
        self.assertIn("inputs: 3 joined, 15 records: piece0.nc (5), piece1.nc (6), piece2.nc (4)",
                      planned.stdout)
        self.assertEqual(self.leftovers(), [])
        result = self.xpose(2, "--chunks", "time/15,lat/4,lon/4", names[0], "--inputs", "list.txt",
                            "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertSameAs("out.nc", "joined.nc")
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            self.assertEqual(nc["tas"].chunking(), [15, 4, 4])
        # joining alone, as ncrcat does: the records in the first input's chunks
        result = self.xpose(2, "--memory", "16K", *names, "alone.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertSameAs("alone.nc", "joined.nc")
        with netCDF4.Dataset(self.path("alone.nc")) as nc:
            self.assertEqual(nc["tas"].chunking(), [1, LAT, LON])
            self.assertEqual(nc["tas"].filters()["zlib"], True)
        checked = self.xpose(2, "verify", *names, "alone.nc")
        self.assertEqual(checked.returncode, 0, checked)

    @unittest.skipIf(shutil.which("ncrcat") is None, "nco is not installed")
    def test_joined_along_a_fixed_dimension_with_concat(self):
        # pieces whose time is a fixed dimension: ncrcat needs it made a
        # record dimension first (ncks --mk_rec_dmn); --concat time does both
        names = []
        for i, (first, records, fmt) in enumerate(((0, 6, "NETCDF4"), (6, 5, "NETCDF3_CLASSIC"),
                                                   (11, 7, "NETCDF4"))):
            names.append(f"fixed{i}.nc")
            write_piece(self.path(names[-1]), first, records, fmt, fixed_time=True)
        refused = self.xpose(2, "--dims", "lat,lon,time", *names, "out.nc")
        self.assertEqual(refused.returncode, 1, refused)
        self.assertIn("fixed0.nc has no record (unlimited) dimension to join the inputs along: "
                      "name one with --concat NAME", refused.stderr)
        for concat, message in (("level", "fixed0.nc has no dimension level"),
                                ("lat", "variable tas of fixed0.nc has lat, the dimension the "
                                        "inputs are joined along, as its axis 2"),):
            with self.subTest(concat=concat):
                result = self.xpose(2, "--concat", concat, "--dims", "lat,lon,time", *names,
                                    "out.nc")
                self.assertEqual(result.returncode, 1, result)
                self.assertIn(message, result.stderr)
                self.assertEqual(self.leftovers(), [])
        result = self.xpose(2, "--concat", "time", "--dims", "lat,lon,time", *names, "out.nc")
        self.assertEqual(result.returncode, 0, result)
        for name in names:
            self.nco("ncks", "-O", "--mk_rec_dmn", "time", name, "rec-" + name)
        self.nco("ncrcat", "-O", "--no_cll_mth", *["rec-" + n for n in names], "joined.nc")
        self.nco("ncpdq", "-O", "-a", "lat,lon,time", "joined.nc", "ncpdq.nc")
        self.assertSameAs("out.nc", "ncpdq.nc")
        checked = self.xpose(2, "verify", "--concat", "time", *names, "out.nc")
        self.assertEqual(checked.returncode, 0, checked)
        self.assertEqual(self.leftovers(), [])

    def test_more_inputs_than_are_open_at_once(self):
        # compressed netCDF-4 and netCDF-3 inputs, their chunks located
        # first and read beside the writes; then with uncompressed netCDF-4
        # among them, read through HDF5
        for uncompressed in (False, True):
            with self.subTest(uncompressed=uncompressed):
                names = [f"day{i:03d}.nc" for i in range(40)]
                for i, name in enumerate(names):
                    write_piece(self.path(name), i, 1, "NETCDF4" if i % 2 else "NETCDF3_CLASSIC",
                                compress=not (uncompressed and i % 4 == 1))
                with open(self.path("days.txt"), "w") as f:
                    f.write("\n".join(names) + "\n")
                result = self.xpose(2, "--force", "--dims", "lat,lon,time", "--inputs", "days.txt",
                                    "out.nc")
                self.assertEqual(result.returncode, 0, result)
                with netCDF4.Dataset(self.path("out.nc")) as out:
                    tas = out["tas"][...]
                    self.assertEqual(tas.shape, (LAT, LON, 40))
                    for i, name in enumerate(names):
                        with netCDF4.Dataset(self.path(name)) as day:
                            np.testing.assert_array_equal(tas[:, :, i], day["tas"][0])

    def test_inputs_of_other_byte_orders(self):
        # each input's values read in the first's byte order (compressed
        # chunks read by the codec, plain ones by HDF5, netCDF-3 in the
        # host's order): once, an input in another order was published as
        # its bytes, "verified"
        pieces = (("big", True, "NETCDF4"), ("little", True, "NETCDF4"),
                  ("little", False, "NETCDF4"), (None, False, "NETCDF3_CLASSIC"))
        names, expected = [], []
        for i, (endian, compress, fmt) in enumerate(pieces):
            names.append(f"order{i}.nc")
            values = np.random.default_rng(i).random((3, LAT, LON)).astype("f4") + 240
            expected.append(values)
            with netCDF4.Dataset(self.path(names[-1]), "w", format=fmt) as nc:
                nc.createDimension("time", None)
                nc.createDimension("lat", LAT)
                nc.createDimension("lon", LON)
                nc.createVariable("time", "f8", ("time",))[:] = np.arange(3) + 3 * i
                extra = {"endian": endian, "zlib": compress, "chunksizes": (1, LAT, LON)} \
                    if fmt == "NETCDF4" else {}
                stored = ">f4" if endian == "big" else "f4"
                nc.createVariable("tas", stored, ("time", "lat", "lon"), **extra)[:] = values
                # a record variable of a dimension's name: netCDF-4's _nc4_non_coord_lat
                nc.createVariable("lat", "f4", ("time", "lat"))[:] = values[:, :, 0]
        for order in (names, names[1:] + names[:1]):
            with self.subTest(first=order[0]):
                result = self.xpose(2, "--force", "--dims", "lat,lon,time", *order, "out.nc")
                self.assertEqual(result.returncode, 0, result)
                joined = np.concatenate([expected[names.index(n)] for n in order])
                with netCDF4.Dataset(self.path("out.nc")) as out:
                    np.testing.assert_array_equal(out["tas"][...], joined.transpose(1, 2, 0))
                    np.testing.assert_array_equal(out["lat"][...], joined[:, :, 0].T)

    def test_inputs_that_differ_are_refused_naming_both(self):
        write_piece(self.path("a.nc"), 0, 4)
        write_piece(self.path("b.nc"), 4, 4, orog_offset=0.5)  # fixed values differ
        with netCDF4.Dataset(self.path("c.nc"), "w") as nc:  # another variable
            nc.createDimension("time", None)
            nc.createVariable("pr", "f4", ("time",))[:] = np.ones(3)
        write_piece(self.path("d.nc"), 8, 4)
        cases = ((["a.nc", "b.nc"], "a.nc and b.nc differ: the values of orog"),
                 (["a.nc", "c.nc"], "a.nc and c.nc differ"),
                 (["a.nc", "missing.nc"], "missing.nc"))
        for inputs, message in cases:
            with self.subTest(inputs=inputs):
                result = self.xpose(2, "--dims", "lat,lon,time", *inputs, "out.nc")
                self.assertEqual(result.returncode in (1, 2), True, result)
                self.assertEqual(result.stderr.count("xpose: error: "), 1, result)
                self.assertIn(message, result.stderr)
                self.assertFalse(os.path.exists(self.path("out.nc")))
                self.assertEqual(self.leftovers(), [])
        # an input named as the output, or as the partial of this output
        for output in ("d.nc", "a.nc"):
            result = self.xpose(2, "--force", "--dims", "lat,lon,time", "a.nc", "d.nc", output)
            self.assertEqual(result.returncode, 1, result)
            self.assertIn(f"output {output} is the input {output}; write to another file",
                          result.stderr)
        os.rename(self.path("d.nc"), self.path("out.nc.xpose-partial"))
        result = self.xpose(2, "--dims", "lat,lon,time", "a.nc", "out.nc.xpose-partial", "out.nc")
        self.assertEqual(result.returncode, 2, result)
        self.assertIn("is the partial output of output out.nc", result.stderr)

    def test_a_file_out_of_order_is_warned_of(self):
        write_piece(self.path("a.nc"), 0, 4)
        write_piece(self.path("b.nc"), 4, 4)
        result = self.xpose(1, "--dims", "lat,lon,time", "b.nc", "a.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("warning: the record coordinate does not increase from b.nc to a.nc",
                      result.stderr)

    def test_stopped_then_resumed_and_a_changed_input_refused(self):
        names = self.pieces(sizes=(40, 40, 40), formats=("NETCDF4", "NETCDF3_CLASSIC"))
        args = ["--memory", "8K", "--checkpoint", "0", "--dims", "lat,lon,time", *names, "out.nc"]
        self.nco("ncrcat", "-O", "--no_cll_mth", *names, "joined.nc")
        self.nco("ncpdq", "-O", "-a", "lat,lon,time", "joined.nc", "ncpdq.nc")
        for change in (False, True):
            with self.subTest(input_changed=change):
                self.stop_midway(args)
                if change:  # the second input touched: its partial is another run's
                    st = os.stat(self.path(names[1]))
                    os.utime(self.path(names[1]), ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
                    refused = self.xpose(2, "--resume", *args)
                    self.assertEqual(refused.returncode, 1, refused)
                    self.assertIn("it was started from other inputs joined, in another order, or "
                                  "one of them changed since", refused.stderr)
                    self.assertFalse(os.path.exists(self.path("out.nc")))
                resumed = self.xpose(2, "--resume", *(["--force"] if change else []), *args)
                self.assertEqual(resumed.returncode, 0, resumed)
                self.assertEqual("(resumed)" in resumed.stdout, not change, resumed)
                self.assertSameAs("out.nc", "ncpdq.nc")
                self.assertEqual(self.leftovers(), [])
                os.remove(self.path("out.nc"))

    def stop_midway(self, args):
        proc = start(2, [XPOSE, *args], cwd=self.dir)
        partial = self.path("out.nc.xpose-partial")
        record = wait_for_record(proc, partial, lambda r: int(r["passes_done"]) >= 5, timeout=60)
        if record is None:
            self.fail(f"the run never got 5 passes done\n{finish(proc)}")
        os.kill(proc.pid, signal.SIGUSR1)
        stopped = finish(proc)
        self.assertEqual(stopped.returncode, 4, stopped)


if __name__ == "__main__":
    unittest.main()
