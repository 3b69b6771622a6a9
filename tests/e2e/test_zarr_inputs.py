"""End to end: Zarr stores as inputs.  Stores that xarray and zarr-python
write (each codec, shuffle filters, "/" chunk keys, big-endian values,
chunks never written) rearranged into netCDF-4 files that xarray reads
as it reads the store; v3 stores xpose wrote, sharded or not, read back;
a store rechunked into a store (rechunker's job); stores joined along
time, into a file and into a store; --plan and `xpose
verify` of a store; damaged stores (JSON, chunks, codecs, groups)
refused naming the store, nothing published, the store untouched."""

import hashlib
import json
import os
import shutil
import unittest

import numpy as np

import signal

from harness import XPOSE, ToolTestCase, finish, start, wait_for_record

try:
    import netCDF4
    import numcodecs
    import xarray
    import zarr
except ImportError:  # Debian's python3-netcdf4, python3-xarray, python3-zarr
    netCDF4 = None

NT, NY, NX = 30, 10, 14


def dataset():
    """A CF dataset: tas (time, lat, lon) with NaNs, coordinates with
    attributes, global attributes of several kinds."""
    rng = np.random.default_rng(7)
    tas = (250 + 30 * rng.random((NT, NY, NX))).astype("f4")
    tas[4:6, 2:5, 3:9] = np.nan
    return xarray.Dataset(
        {"tas": (("time", "lat", "lon"), tas,
                 {"units": "K", "standard_name": "air_temperature", "valid_range": [150.0, 350.0],
                  "flag_values": [1, 2, 3]})},
        coords={"time": ("time", np.arange(NT) + 0.5,
                         {"units": "days since 2000-01-01", "calendar": "noleap"}),
                "lat": ("lat", np.linspace(-85, 85, NY).astype("f4"), {"units": "degrees_north"}),
                "lon": ("lon", np.linspace(0, 350, NX).astype("f4"), {"units": "degrees_east"})},
        attrs={"title": "zarr inputs", "Conventions": "CF-1.8", "realization": 2,
               "history": "made by the tests"})


def tree_digest(path):
    """Every file under path, with its bytes, as one digest."""
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for name in sorted(files):
            h.update(os.path.join(root, name).encode())
            with open(os.path.join(root, name), "rb") as f:
                h.update(f.read())
    return h.hexdigest()


@unittest.skipIf(netCDF4 is None, "python3-netcdf4, python3-xarray or python3-zarr is missing")
class ZarrInputs(ToolTestCase):
    def run_ok(self, ranks, *args):
        result = self.xpose(ranks, *args)
        self.assertEqual(result.returncode, 0, result)
        return result

    def assertSameAsStore(self, store, nc, order=("lat", "lon", "time")):
        """xarray reads the netCDF output as it reads the store, the
        variables' axes in `order` (but the history xpose adds to)."""
        expected = xarray.open_zarr(self.path(store)).load().transpose(*order)
        got = xarray.open_dataset(self.path(nc)).load().transpose(*order)
        self.assertIn(expected.attrs.pop("history"), got.attrs.pop("history"))
        xarray.testing.assert_identical(expected, got)

    def test_stores_of_each_codec_into_netcdf_as_xarray_reads_them(self):
        codecs = {"blosc-lz4": {}, "blosc-zstd": {"compressor": numcodecs.Blosc("zstd", 3)},
                  "zlib-shuffle": {"compressor": numcodecs.Zlib(4),
                                   "filters": [numcodecs.Shuffle(4)]},
                  "gzip": {"compressor": numcodecs.GZip(5)}, "zstd": {"compressor": numcodecs.Zstd(3)},
                  "none": {"compressor": None}}
        for name, encoding in codecs.items():
            with self.subTest(codec=name):
                store = f"{name}.zarr"
                dataset().to_zarr(self.path(store),
                                  encoding={"tas": {"chunks": (1, NY, NX), **encoding}})
                self.run_ok(2, "--dims", "lat,lon,time", store, f"{name}.nc")
                self.assertSameAsStore(store, f"{name}.nc")
        self.assertEqual(self.leftovers(), [])

    def test_slash_keys_big_endian_values_and_chunks_never_written(self):
        root = zarr.open_group(self.path("in.zarr"), mode="w")
        values = np.arange(NT * NY * NX, dtype=">f8").reshape(NT, NY, NX)
        values[10:20] = -1  # chunks of the fill value: not written
        a = root.create_dataset("v", shape=values.shape, chunks=(5, 4, 7), dtype=">f8",
                                fill_value=-1, dimension_separator="/", write_empty_chunks=False,
                                compressor=numcodecs.Zstd(1))
        a[...] = values
        a.attrs["_ARRAY_DIMENSIONS"] = ["t", "y", "x"]
        self.assertFalse(os.path.exists(self.path("in.zarr/v/2/0/0")))  # one never written
        self.assertTrue(os.path.exists(self.path("in.zarr/v/0/0/0")))
        self.run_ok(3, "--dims", "x,t,y", "in.zarr", "out.nc")
        with netCDF4.Dataset(self.path("out.nc")) as f:
            self.assertEqual(f["v"].dimensions, ("x", "t", "y"))
            self.assertEqual(f["v"].dtype, np.dtype(">f8"))
            self.assertTrue(np.array_equal(f["v"][...].data, values.transpose(2, 0, 1)))
            self.assertEqual(f["v"]._FillValue, -1)

    def test_v3_stores_sharded_or_not_read_back_and_stores_rechunked_into_stores(self):
        dataset().to_zarr(self.path("in.zarr"), encoding={"tas": {"chunks": (1, NY, NX)}})
        for k, options in enumerate(((), ("--shards", "lat/10,lon/14,time/30"))):
            with self.subTest(options=options):
                self.run_ok(2, "--dims", "lat,lon,time", "--zarr-format", "3", *options,
                            "in.zarr", f"series{k}.zarr")
                self.run_ok(2, "verify", "--dims", "lat,lon,time", "in.zarr", f"series{k}.zarr")
                self.run_ok(3, "--dims", "time,lat,lon", f"series{k}.zarr", f"back{k}.nc")
                self.assertSameAsStore("in.zarr", f"back{k}.nc")
        # rechunker's job: a store into a store of time series
        self.run_ok(3, "--chunks", "time/30,lat/5,lon/7", "--zarr-format", "2", "in.zarr",
                    "out.zarr")
        self.assertEqual(zarr.open_group(self.path("out.zarr"), "r")["tas"].chunks, (30, 5, 7))
        expected = xarray.open_zarr(self.path("in.zarr")).load()
        got = xarray.open_zarr(self.path("out.zarr")).load()
        self.assertIn(expected.attrs.pop("history"), got.attrs.pop("history"))
        xarray.testing.assert_identical(expected, got)
        self.assertEqual(self.leftovers(), [])

    def test_stores_joined_along_time_as_one_store_of_them_all(self):
        whole = dataset()
        whole.to_zarr(self.path("whole.zarr"))
        parts = ((0, 9, {}), (9, 20, {"compressor": numcodecs.Zlib(4)}),
                 (20, NT, {"compressor": numcodecs.Zstd(1), "chunks": (2, 5, 7)}))
        for k, (first, end, encoding) in enumerate(parts):
            whole.isel(time=slice(first, end)).to_zarr(self.path(f"part{k}.zarr"),
                                                       encoding={"tas": encoding})
        stores = [f"part{k}.zarr" for k in range(3)]
        self.run_ok(3, "--concat", "time", "--dims", "lat,lon,time", *stores, "series.nc")
        self.assertSameAsStore("whole.zarr", "series.nc")
        self.run_ok(2, "verify", "--concat", "time", "--dims", "lat,lon,time", *stores, "series.nc")
        self.run_ok(2, "--concat", "time", "--chunks", "time/30,lat/5,lon/7", "--zarr-format", "2",
                    *stores, "series.zarr")
        expected = xarray.open_zarr(self.path("whole.zarr")).load()
        got = xarray.open_zarr(self.path("series.zarr")).load()
        self.assertIn(expected.attrs.pop("history"), got.attrs.pop("history"))
        xarray.testing.assert_identical(expected, got)
        self.assertEqual(self.leftovers(), [])  # each store's view made and removed
        # refused, naming the stores: no dimension named, a file among stores, the views' folder
        result = self.xpose(2, "--dims", "lat,lon,time", *stores, "none.nc")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("part0.zarr has no record (unlimited) dimension to join the inputs along: "
                      "name one with --concat NAME", result.stderr)
        result = self.xpose(2, "--concat", "time", "part0.zarr", "series.nc", "none2.nc")
        self.assertIn("part0.zarr is a Zarr store and series.nc a file: xpose joins stores with "
                      "stores, files with files", result.stderr)
        os.mkdir(self.path("out.nc.xpose-store-views"))
        shutil.copy(self.path("series.nc"), self.path("out.nc.xpose-store-views/0.nc"))
        result = self.xpose(2, "out.nc.xpose-store-views/0.nc", "out.nc")
        self.assertEqual(result.returncode, 2, result)
        self.assertIn("lies in out.nc.xpose-store-views, the folder of output out.nc's views",
                      result.stderr)
        self.assertFalse(any(os.path.exists(self.path(n)) for n in ("none.nc", "none2.nc", "out.nc")))

    def remove(self, name):
        path = self.path(name)
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)

    def test_plan_verify_and_the_store_as_its_own_output(self):
        dataset().to_zarr(self.path("in.zarr"), encoding={"tas": {"chunks": (1, NY, NX)}})
        result = self.run_ok(2, "--plan", "--dims", "lat,lon,time", "in.zarr", "out.nc")
        self.assertIn("tas", result.stderr + result.stdout)
        self.assertFalse(os.path.exists(self.path("out.nc")))
        self.run_ok(2, "--dims", "lat,lon,time", "in.zarr", "out.nc")
        self.run_ok(2, "verify", "in.zarr", "out.nc")
        before = tree_digest(self.path("in.zarr"))
        result = self.xpose(2, "--dims", "lat,lon,time", "in.zarr", "in.zarr")
        self.assertEqual(result.returncode, 1, result)
        self.assertIn("output in.zarr is the input", result.stderr)
        self.assertEqual(tree_digest(self.path("in.zarr")), before)

    def test_a_stopped_run_resumes_from_the_store(self):
        values = np.random.default_rng(3).random((600, 20, 30)).astype("f4")
        xarray.Dataset({"tas": (("time", "lat", "lon"), values)}).to_zarr(
            self.path("in.zarr"), encoding={"tas": {"chunks": (1, 20, 30)}})
        args = ["--memory", "64K", "--checkpoint", "0", "--dims", "lat,lon,time", "in.zarr",
                "out.nc"]
        proc = start(2, [XPOSE, *args], cwd=self.dir)
        if wait_for_record(proc, self.path("out.nc.xpose-partial"),
                           lambda r: int(r["passes_done"]) >= 3) is None:
            self.fail(f"no pass was recorded\n{finish(proc)}")
        os.kill(proc.pid, signal.SIGUSR1)
        result = finish(proc)
        self.assertEqual(result.returncode, 4, result)
        self.assertFalse(os.path.exists(self.path("out.nc")))
        result = self.run_ok(2, "--resume", *args)
        self.assertIn("(resumed)", result.stdout)
        with netCDF4.Dataset(self.path("out.nc")) as f:
            self.assertTrue(np.array_equal(f["tas"][...], values.transpose(1, 2, 0)))
        self.assertEqual(self.leftovers(), [])

    def test_damaged_stores_are_refused_naming_them(self):
        def fresh():
            self.remove("in.zarr") if os.path.exists(self.path("in.zarr")) else None
            dataset().to_zarr(self.path("in.zarr"),
                              encoding={"tas": {"chunks": (1, NY, NX), "compressor": numcodecs.Zlib(1)}})

        def truncate(path, keep):
            with open(self.path(path), "rb") as f:
                data = f.read()
            with open(self.path(path), "wb") as f:
                f.write(data[:keep])

        def set_json(path, key, value):
            with open(self.path(path)) as f:
                meta = json.load(f)
            meta[key] = value
            with open(self.path(path), "w") as f:
                json.dump(meta, f)

        cases = {
            "its .zarray is not JSON": (lambda: truncate("in.zarr/tas/.zarray", 30),
                                        r"in\.zarr/tas: its \.zarray is not JSON"),
            "a chunk cut short": (lambda: truncate("in.zarr/tas/3.0.0", 20), r"in\.zarr/tas"),
            "a codec xpose does not read": (
                lambda: set_json("in.zarr/tas/.zarray", "filters", [{"id": "delta", "dtype": "<f4"}]),
                r"in\.zarr/tas: its codec \"delta\" is not one xpose reads"),
            "Fortran order": (lambda: set_json("in.zarr/tas/.zarray", "order", "F"),
                              r"in\.zarr/tas: its order is \"F\""),
            "a group inside": (lambda: zarr.open_group(self.path("in.zarr/inner"), mode="w"),
                               r"in\.zarr/inner is a group inside the store"),
        }
        for name, (damage, message) in cases.items():
            with self.subTest(damage=name):
                fresh()
                damage()
                before = tree_digest(self.path("in.zarr"))
                result = self.xpose(2, "--dims", "lat,lon,time", "in.zarr", "out.nc")
                self.assertEqual(result.returncode, 1, result)
                self.assertRegex(result.stderr, message)
                self.assertEqual(result.stderr.count("xpose: error:"), 1, result.stderr)
                self.assertFalse(os.path.exists(self.path("out.nc")))
                self.assertEqual(tree_digest(self.path("in.zarr")), before)
                self.assertEqual(self.leftovers(), [])


if __name__ == "__main__":
    unittest.main()
