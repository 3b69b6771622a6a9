"""End to end: Zarr stores as outputs, read by the clients users have.
A CF file's time slices turned into time series (and rechunked) into Zarr
v2, opened with xarray's open_zarr, equal to open_dataset of the netCDF-4
output of the same run (values, coordinates, attributes, decoded times,
masked fill values), with each codec, files joined and a netCDF-3 file
too; Zarr v3 read value for value by
zarrita (npm; skipped, saying so, where it is not installed); several
ranks writing their own chunks; v3 shards, each written whole by one
rank, read by zarrita, and by default for an array of many chunks; four
ranks on two pretend nodes writing even shares; a store never replaced; a stopped run resumed to
the same store, a killed one whose chunk file was damaged started over;
--filter and --shards for v2 refused; `xpose verify` of a store, and
a rerun that finds the store done whatever budget chunked it."""

import json
import os
import shutil
import signal
import subprocess
import time
import unittest

import numpy as np

from harness import HAVE_ZARRITA, ToolTestCase, finish, start

try:
    import netCDF4
    import xarray
    import zarr
except ImportError:  # Debian's python3-netcdf4, python3-xarray, python3-zarr
    netCDF4 = None

STOPPED = 4
NT, NY, NX = 40, 18, 36


def write_cf(path, nt=NT, ny=NY, nx=NX, chars=True):
    """A daily CF file: tas (time, lat, lon) float32 compressed, with a
    masked value, coordinates, time bounds, a scalar grid mapping and
    (chars) station names, netCDF's characters."""
    with netCDF4.Dataset(path, "w") as d:
        d.Conventions, d.history, d.title = "CF-1.8", "made by the tests", "tas"
        d.createDimension("time", None)
        d.createDimension("lat", ny)
        d.createDimension("lon", nx)
        d.createDimension("bnds", 2)
        t = d.createVariable("time", "f8", ("time",))
        t.units, t.calendar, t.bounds = "days since 2000-01-01", "noleap", "time_bnds"
        t[:] = np.arange(nt) + 0.5
        d.createVariable("time_bnds", "f8", ("time", "bnds"))[:] = np.stack(
            [np.arange(nt), np.arange(nt) + 1], 1)
        lat = d.createVariable("lat", "f4", ("lat",))
        lat.units, lat[:] = "degrees_north", np.linspace(-85, 85, ny)
        lon = d.createVariable("lon", "f4", ("lon",))
        lon.units, lon[:] = "degrees_east", np.linspace(0, 350, nx)
        v = d.createVariable("tas", "f4", ("time", "lat", "lon"), zlib=True, complevel=4,
                             shuffle=True, chunksizes=(1, ny, nx), fill_value=np.float32(1e20))
        v.units, v.standard_name, v.scale_factor = "K", "air_temperature", np.float32(1)
        values = (250 + 30 * np.random.default_rng(1).random((nt, ny, nx))).astype("f4")
        values[3, 4, 5] = 1e20
        v[:] = values
        d.createVariable("crs", "i4", ()).grid_mapping_name = "latitude_longitude"
        if chars:
            d.createDimension("station", 3)
            d.createDimension("name_length", 6)
            names = d.createVariable("station_name", "S1", ("station", "name_length"))
            names.long_name = "station name"
            names[:] = netCDF4.stringtochar(np.array(["Oslo", "Lima", "Perth"], "S6"))


@unittest.skipIf(netCDF4 is None, "python3-netcdf4, python3-xarray or python3-zarr is missing")
class Zarr(ToolTestCase):
    def setUp(self):
        super().setUp()
        write_cf(self.path("in.nc"))

    def run_ok(self, ranks, *args, env=None):
        result = self.xpose(ranks, *args, env=env)
        self.assertEqual(result.returncode, 0, result)
        return result

    def assertSameDataset(self, nc, store):
        expected = xarray.open_dataset(self.path(nc)).load()
        got = xarray.open_zarr(self.path(store)).load()
        self.assertEqual(expected.attrs.pop("history").split(": ", 1)[0][:10],
                         got.attrs.pop("history").split(": ", 1)[0][:10])
        xarray.testing.assert_identical(expected, got)
        self.assertEqual(got.tas.encoding["_FillValue"], np.float32(1e20))
        return got

    def test_time_series_into_zarr_v2_as_xarray_reads_the_netcdf_output(self):
        self.run_ok(2, "--dims", "lat,lon,time", "in.nc", "series.nc")
        for codec, numcodecs_id in (("blosc-zstd", "blosc"), ("blosc-lz4", "blosc"),
                                    ("gzip:6", "gzip"), ("zstd:3", "zstd"), ("none", None)):
            with self.subTest(codec=codec):
                store = f"series-{codec.split(':')[0]}.zarr"
                self.run_ok(2, "--dims", "lat,lon,time", "--zarr-format", "2", "--compressor",
                            codec, "in.nc", store)
                got = self.assertSameDataset("series.nc", store)
                compressor = got.tas.encoding["compressor"]
                self.assertEqual(compressor.codec_id if compressor else None, numcodecs_id)
                self.assertEqual(got.tas.dims, ("lat", "lon", "time"))
                with open(self.path(f"{store}/.zmetadata")) as f:
                    self.assertIn("tas/.zarray", json.load(f)["metadata"])
        self.assertEqual(self.leftovers(), [])

    @unittest.skipUnless(shutil.which("ncks"), "nco is not installed")
    def test_files_joined_and_a_netcdf3_file_into_stores(self):
        for args in (["-d", "time,0,19", "in.nc", "a.nc"], ["-d", "time,20,39", "in.nc", "b.nc"],
                     ["-3", "in.nc", "classic.nc"]):
            made = subprocess.run(["ncks", "-O", *args], cwd=self.dir, capture_output=True, text=True)
            self.assertEqual(made.returncode, 0, made.stderr)
        self.run_ok(2, "--dims", "lat,lon,time", "in.nc", "series.nc")
        self.run_ok(2, "--dims", "lat,lon,time", "a.nc", "b.nc", "joined.nc")
        self.run_ok(2, "--dims", "lat,lon,time", "--zarr-format", "2", "a.nc", "b.nc", "joined.zarr")
        self.assertSameDataset("joined.nc", "joined.zarr")
        self.run_ok(2, "--dims", "lat,lon,time", "--zarr-format", "2", "classic.nc", "classic.zarr")
        expected = xarray.open_dataset(self.path("series.nc"))
        self.assertTrue(expected.tas.equals(xarray.open_zarr(self.path("classic.zarr")).tas.load()))
        self.assertEqual(self.leftovers(), [])

    @unittest.skipUnless(shutil.which("ncdump"), "netcdf-bin is not installed")
    def test_nczarr_reads_an_uncompressed_v2_store_as_the_netcdf_output(self):
        # Debian's netCDF-C (4.9) has NCZarr but none of its codec plugins:
        # it reads compressed chunks as if they were not (garbage, no error);
        # and it crashes on characters (|S1), zarr-python's arrays too.
        write_cf(self.path("in.nc"), chars=False)
        self.run_ok(2, "--dims", "lat,lon,time", "in.nc", "series.nc")
        self.run_ok(2, "--dims", "lat,lon,time", "--zarr-format", "2", "--compressor", "none",
                    "in.nc", "series.zarr")
        def data(url, name):  # (NCZarr lists the variables by name)
            dump = subprocess.run(["ncdump", "-v", name, url], capture_output=True, text=True,
                                  timeout=60)
            self.assertEqual(dump.returncode, 0, dump.stderr)
            # (a masked value: "_" in the file's, its fill value in NCZarr's)
            values = dump.stdout.split("data:", 1)[1].replace("{", "").replace("}", "")
            return values.replace("_,", "1e+20,").split()
        for name in ("tas", "lat", "time_bnds"):
            self.assertEqual(data(self.path("series.nc"), name),
                             data(f"file://{self.path('series.zarr')}#mode=zarr,file", name), name)

    def test_rechunked_by_three_ranks_each_writing_its_own_chunks(self):
        self.run_ok(1, "--chunks", "time/40,lat/5,lon/7", "in.nc", "rechunked.nc")
        result = self.run_ok(3, "--json", "--chunks", "time/40,lat/5,lon/7", "--zarr-format", "2",
                             "in.nc", "rechunked.zarr")
        got = self.assertSameDataset("rechunked.nc", "rechunked.zarr")
        self.assertEqual(got.tas.encoding["chunks"], (40, 5, 7))
        chunks = [n for n in os.listdir(self.path("rechunked.zarr/tas")) if not n.startswith(".")]
        self.assertEqual(len(chunks), 1 * 4 * 6)
        # each rank its own share, and the time bounds (one chunk) on one of them
        written = json.loads(result.stdout)["written_by_rank"]
        self.assertEqual(sum(r["files"] for r in written), 1 * 4 * 6 + 1)
        self.assertTrue(all(r["files"] >= 6 and r["bytes"] > 0 for r in written), written)

    def test_four_ranks_on_two_nodes_write_even_shares(self):
        """6 bands of chunks (18 latitudes by 3) on 4 ranks: the passes
        would give 2 ranks twice the others' chunks; the phases deal the
        54 chunks out, 14, 14, 13 and 13."""
        result = self.run_ok(4, "--json", "-v", "--chunks", "time/40,lat/3,lon/4", "--zarr-format",
                             "2", "in.nc:/tas", "--only", "even.zarr", env={"XPOSE_PRETEND_NODES": "2"})
        self.assertIn("the passes would deal its 6 band(s) of whole output chunks to 4 rank(s) "
                      "unevenly, so it moves in two phases", result.stderr)
        written = json.loads(result.stdout)["written_by_rank"]
        self.assertEqual(sorted(r["files"] for r in written), [13, 13, 14, 14])
        sizes = [r["bytes"] for r in written]
        self.assertLessEqual(max(sizes), 1.25 * sum(sizes) / len(sizes), written)
        expected = xarray.open_dataset(self.path("in.nc")).tas.values
        got = xarray.open_zarr(self.path("even.zarr")).tas.values
        self.assertTrue(np.array_equal(expected, got, equal_nan=True))

    def assertInputValues(self, read, order=None):
        """zarrita's values equal the input's (tas's axes in `order`)."""
        with netCDF4.Dataset(self.path("in.nc")) as nc:
            nc.set_auto_maskandscale(False)
            for name, path in read.items():
                expected = nc[name][...]
                if name == "tas" and order:
                    expected = np.transpose(expected, order)
                got = np.fromfile(path, dtype=expected.dtype)
                self.assertTrue(np.array_equal(got.reshape(expected.shape), expected), name)

    @unittest.skipUnless(HAVE_ZARRITA,
                         "zarrita is not installed (jobs/test.sh installs it from npm)")
    def test_zarr_v3_read_by_zarrita(self):
        result = self.xpose(2, "--dims", "lat,lon,time", "in.nc", "series.zarr")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("in.nc:/station_name cannot be stored: Zarr v3 has no data type for "
                      "characters: use --zarr-format 2", result.stderr)
        self.assertEqual(self.leftovers(), [])
        write_cf(self.path("in.nc"), chars=False)
        self.run_ok(2, "--dims", "lat,lon,time", "in.nc", "series.zarr")  # v3 by default
        with open(self.path("series.zarr/tas/zarr.json")) as f:
            meta = json.load(f)
        self.assertEqual((meta["dimension_names"], meta["fill_value"]), (["lat", "lon", "time"], 1e20))
        self.assertEqual(meta["codecs"][1]["name"], "blosc")
        read = self.read_with_zarrita("series.zarr", ["tas", "lat", "lon", "time", "time_bnds", "crs"])
        self.assertInputValues(read, order=(1, 2, 0))

    @unittest.skipUnless(HAVE_ZARRITA,
                         "zarrita is not installed (jobs/test.sh installs it from npm)")
    def test_shards_each_written_whole_by_one_rank_read_by_zarrita(self):
        write_cf(self.path("in.nc"), chars=False)
        self.run_ok(3, "--chunks", "time/40,lat/3,lon/4", "--shards", "time/40,lat/9,lon/10",
                    "in.nc", "sharded.zarr")
        with open(self.path("sharded.zarr/tas/zarr.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["chunk_grid"]["configuration"]["chunk_shape"], [40, 9, 12])
        sharding = meta["codecs"][0]
        self.assertEqual((sharding["name"], sharding["configuration"]["chunk_shape"]),
                         ("sharding_indexed", [40, 3, 4]))
        shards = [os.path.join(d, f) for d, _, files in os.walk(self.path("sharded.zarr/tas/c"))
                  for f in files]
        self.assertEqual(len(shards), 1 * 2 * 3)
        self.assertInputValues(self.read_with_zarrita("sharded.zarr", ["tas", "time_bnds"]))
        result = self.xpose(1, "--zarr-format", "2", "--shards", "lat/9", "in.nc", "v2.zarr")
        self.assertEqual(result.returncode, 2, result)
        self.assertIn("--shards makes Zarr v3's shards", result.stderr)

    @unittest.skipUnless(HAVE_ZARRITA,
                         "zarrita is not installed (jobs/test.sh installs it from npm)")
    def test_an_array_of_many_chunks_is_sharded_by_default(self):
        write_cf(self.path("in.nc"), ny=36, nx=70, chars=False)
        args = ["--chunks", "time/40,lat/1,lon/1", "in.nc"]
        plan = self.run_ok(2, "--plan", *args, "sharded.zarr")
        self.assertIn("chunks 40 x 1 x 1 in shards of 1 x 2 x 2, blosc-zstd:3, 630 file(s)",
                      plan.stdout + plan.stderr)
        self.run_ok(2, *args, "sharded.zarr")  # 36 x 70 chunks: a file each would be 2520
        with open(self.path("sharded.zarr/tas/zarr.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["chunk_grid"]["configuration"]["chunk_shape"], [40, 2, 2])
        self.assertEqual(meta["codecs"][0]["configuration"]["chunk_shape"], [40, 1, 1])
        files = sum(len(f) for _, _, f in os.walk(self.path("sharded.zarr/tas/c")))
        self.assertEqual(files, 18 * 35)
        self.assertInputValues(self.read_with_zarrita("sharded.zarr", ["tas"]))
        self.run_ok(1, "--shards", "none", *args, "unsharded.zarr")
        with open(self.path("unsharded.zarr/tas/zarr.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["chunk_grid"]["configuration"]["chunk_shape"], [40, 1, 1])
        self.assertEqual(meta["codecs"][0]["name"], "bytes")
        # a rerun finds the default shards done; one asking for none finds other shards
        result = self.run_ok(2, "--resume", *args, "sharded.zarr")
        self.assertIn("sharded.zarr already holds the 2 datasets of in.nc", result.stdout)
        result = self.xpose(2, "--resume", "--shards", "none", *args, "sharded.zarr")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("is stored in other shards than --shards asks for", result.stderr)

    def test_a_store_is_never_replaced_and_the_hdf5_options_are_refused(self):
        os.mkdir(self.path("taken.zarr"))
        result = self.xpose(1, "--dims", "lat,lon,time", "--force", "in.nc", "taken.zarr")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("output taken.zarr exists; xpose never replaces a store", result.stderr)
        self.assertEqual(os.listdir(self.path("taken.zarr")), [])
        # a rerun of a finished job (batch scripts pass --resume): checked, left as it is
        args = ["--dims", "lat,lon,time", "--zarr-format", "2", "in.nc", "done.zarr"]
        self.run_ok(2, *args)
        before = os.stat(self.path("done.zarr/tas/.zarray")).st_mtime_ns
        result = self.run_ok(2, "--resume", *args)
        self.assertIn("done.zarr:/tas is already the transpose of in.nc:/tas", result.stdout)
        result = self.run_ok(2, "--resume", "--memory", "64K", *args)  # other chunks: done too
        self.assertIn("done.zarr:/tas is already the transpose of in.nc:/tas", result.stdout)
        result = self.run_ok(2, "verify", "--dims", "lat,lon,time", "in.nc", "done.zarr")
        self.assertIn("done.zarr:/tas is the transpose of in.nc:/tas", result.stdout)
        result = self.xpose(2, "--resume", "--compressor", "gzip", *args)
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("output done.zarr exists and is not the transpose", result.stderr)
        with open(self.path("done.zarr/tas/0.0.0"), "r+b") as f:
            f.write(b"garbage")
        result = self.xpose(2, "--resume", *args)
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("remove it to write it again (a store is never replaced)", result.stderr)
        self.assertEqual(os.stat(self.path("done.zarr/tas/.zarray")).st_mtime_ns, before)
        result = self.xpose(1, "--filter", "gzip", "in.nc", "out.zarr")
        self.assertEqual(result.returncode, 2, result)
        self.assertIn("--filter are for HDF5 outputs", result.stderr)
        result = self.xpose(1, "verify", "in.nc", "taken.zarr")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("taken.zarr is a directory, not an HDF5 file or a Zarr store", result.stderr)
        result = self.xpose(1, "--compressor", "blosc-zstd:12", "in.nc", "out.zarr")
        self.assertEqual(result.returncode, 2, result)
        self.assertIn("invalid --compressor 'blosc-zstd:12'", result.stderr)

    def test_a_stopped_or_killed_run_resumes_to_the_same_store(self):
        write_cf(self.path("big.nc"), nt=400, ny=45, nx=90)
        args = ["--dims", "lat,lon,time", "--zarr-format", "2", "--memory", "256K",
                "--checkpoint", "0", "big.nc", "out.zarr"]
        proc = start(2, [os.environ["XPOSE"], *args], cwd=self.dir)
        deadline = time.time() + 60
        partial = self.path("out.zarr.xpose-partial/tas")
        while time.time() < deadline and proc.poll() is None and len(os.listdir(
                partial) if os.path.isdir(partial) else []) < 20:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGUSR1)
        result = finish(proc)
        self.assertEqual(result.returncode, STOPPED, result)
        self.assertRegex(result.stderr, r"stopped by SIGUSR1 after \d+ of \d+ passes; "
                                        r"out.zarr.xpose-partial keeps them")
        result = self.run_ok(2, "--resume", *args)
        self.assertRegex(result.stderr, r"resuming from out.zarr.xpose-partial: \d+ of \d+ passes")
        expected = xarray.open_dataset(self.path("big.nc")).tas.transpose("lat", "lon", "time")
        self.assertTrue(expected.equals(xarray.open_zarr(self.path("out.zarr")).tas.load()))
        self.assertEqual(self.leftovers(), [])
        # killed, one of its chunk files damaged: read back wrong, started over
        shutil.rmtree(self.path("out.zarr"))
        proc, deadline = start(2, [os.environ["XPOSE"], *args], cwd=self.dir), time.time() + 60
        while time.time() < deadline and proc.poll() is None and len(os.listdir(
                partial) if os.path.isdir(partial) else []) < 20:
            time.sleep(0.01)
        subprocess.run(["pkill", "-9", "-P", str(proc.pid)])
        finish(proc)
        chunk = next(n for n in sorted(os.listdir(partial)) if not n.startswith("."))
        with open(os.path.join(partial, chunk), "r+b") as f:
            f.seek(20)
            f.write(b"garbage")
        result = self.run_ok(2, "--resume", *args)
        self.assertIn("are redone: /tas: its chunk at", result.stderr)
        self.assertIn("its bytes do not decompress (Blosc): it is damaged", result.stderr)
        self.assertTrue(expected.equals(xarray.open_zarr(self.path("out.zarr")).tas.load()))


if __name__ == "__main__":
    unittest.main(verbosity=2)
