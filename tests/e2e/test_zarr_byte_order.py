"""End to end: big-endian Zarr stores (issue 74).  Every array of a store
of big-endian values (v2 from xarray, v3 made by hand), of each codec,
read as zarr_reference.py reads it (and xarray, for v2; zarrita, for
the v3 outputs) on every path:
rearranged and copied into netCDF-4, into v2 and v3 stores, joined,
stopped and resumed, and `xpose verify`.  The values xpose writes into
its netCDF-4 view of a store are read back against the store by other
code than wrote them: where netCDF-C writes them wrongly (a shim that
reverses or damages what nc_put_vara is given), the run either
compensates (netCDF-C 4.9's fault, which xpose probes for) or fails,
never publishing a wrong copy."""

import os
import signal
import sys
import unittest

import numpy as np

from harness import HAVE_ZARRITA, XPOSE, ToolTestCase, finish, start, wait_for_record

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zarr"))

try:
    import netCDF4
    import numcodecs
    import xarray

    import zarr_reference as ref
except ImportError:  # Debian's python3-netcdf4, python3-xarray, python3-zarr
    netCDF4 = None

NT, NY, NX = 12, 5, 7
NC_PUT_FAULT = os.environ.get("XPOSE_NC_PUT_FAULT")


def big_endian_dataset(first=0, nt=NT):
    """tas (time, lat, lon) >f4 with NaNs, time >f8, time_bnds >f8, lat
    >f4, lon <f4 (one little-endian coordinate among them), level >i2."""
    rng = np.random.default_rng(74)
    tas = (250 + 30 * rng.random((NT, NY, NX))).astype(">f4")[first:first + nt]
    time = (np.arange(NT) + 0.5).astype(">f8")[first:first + nt]
    return xarray.Dataset(
        {"tas": (("time", "lat", "lon"), tas, {"units": "K"}),
         "time_bnds": (("time", "nv"), np.stack([time - 0.5, time + 0.5], 1).astype(">f8")),
         "level": (("lat",), (np.arange(NY) * 1000 - 2000).astype(">i2"))},
        coords={"time": ("time", time, {"units": "days since 2000-01-01"}),
                "lat": ("lat", np.linspace(-60, 60, NY).astype(">f4")),
                "lon": ("lon", np.linspace(0, 300, NX).astype("<f4"))},
        attrs={"title": "big-endian"})


V3_CODECS = {"blosc-lz4": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                                "shuffle": "shuffle"}}],
             "zstd": [{"name": "zstd", "configuration": {"level": 3}}, {"name": "crc32c"}],
             "gzip": [{"name": "gzip", "configuration": {"level": 4}}],
             "none": []}
V2_CODECS = {"blosc-lz4": numcodecs.Blosc("lz4", 5) if netCDF4 else None,
             "zstd": numcodecs.Zstd(3) if netCDF4 else None,
             "gzip": numcodecs.GZip(4) if netCDF4 else None, "none": None}


def write_v3_store(path, ds, codecs, shards=False):
    """The dataset as a v3 store by hand: every array big-endian as it is."""
    ref.write_group_v3(path, ds.attrs)
    for name, var in {**ds.coords, **ds.data_vars}.items():
        values = var.values
        chunks = [max(1, n // 2) for n in values.shape]
        ref.write_v3(path, name, values, chunks, dims=list(var.dims),
                     endian="big" if values.dtype.byteorder == ">" else "little", codecs=codecs,
                     fill=np.nan if values.dtype.kind == "f" else 0,
                     shards=[2 * c for c in chunks] if shards and values.ndim == 3 else None,
                     attributes=dict(var.attrs))


@unittest.skipIf(netCDF4 is None, "python3-netcdf4, python3-xarray or python3-zarr is missing")
class BigEndianStores(ToolTestCase):
    def run_ok(self, ranks, *args, env=None):
        result = self.xpose(ranks, *args, env=env)
        self.assertEqual(result.returncode, 0, result)
        return result

    def assertNetcdfHolds(self, expected, nc):
        """Every array of the store (zarr_reference's reading) in the
        netCDF-4 file, its axes in the file's order, bit for bit."""
        with netCDF4.Dataset(self.path(nc)) as f:
            for name, array in expected.items():
                var = f[name]
                var.set_auto_maskandscale(False)
                values = array.values.transpose([array.dims.index(d) for d in var.dimensions])
                got = np.asarray(var[...])
                self.assertEqual(got.dtype.str[1:], values.dtype.str[1:], name)
                self.assertEqual(got.astype(got.dtype.newbyteorder("=")).tobytes(),
                                 values.astype(values.dtype.newbyteorder("=")).tobytes(), name)

    def assertStoreHolds(self, expected, store, version):
        """The reference's reading of the output store, and zarrita's of a
        v3 one (where jobs/test.sh installed it), are the input's."""
        got = ref.read_store(self.path(store))
        self.assertEqual(sorted(got), sorted(expected))
        zarrita = self.read_with_zarrita(store, list(expected)) if version == 3 and HAVE_ZARRITA \
            else {}
        for name, array in expected.items():
            values = array.values.transpose([array.dims.index(d) for d in got[name].dims])
            self.assertTrue(np.array_equal(values, got[name].values, equal_nan=True), name)
            if name in zarrita:
                native = values.astype(values.dtype.newbyteorder("="))
                with open(zarrita[name], "rb") as f:
                    self.assertEqual(f.read(), native.tobytes(), f"{name} as zarrita reads it")

    def test_every_codec_v2_and_v3_into_netcdf_and_stores(self):
        for version in (2, 3):
            for codec in V3_CODECS:
                with self.subTest(version=version, codec=codec):
                    store = f"v{version}-{codec}.zarr"
                    ds = big_endian_dataset()
                    if version == 2:
                        ds.to_zarr(self.path(store), encoding={
                            name: {"compressor": V2_CODECS[codec]} for name in ds.variables})
                    else:
                        write_v3_store(self.path(store), ds, V3_CODECS[codec], codec == "zstd")
                    expected = ref.read_store(self.path(store))
                    self.assertEqual(expected["time"].values.dtype.str, ">f8")
                    nc = f"v{version}-{codec}.nc"
                    self.run_ok(2, "--dims", "lat,lon,time", store, nc)
                    self.assertNetcdfHolds(expected, nc)
                    self.run_ok(2, "verify", "--dims", "lat,lon,time", store, nc)
                    if version == 2:  # xarray reads both alike
                        self.assertXarrayAlike(store, nc)
                    for out_version in (2, 3):
                        out = f"v{version}-{codec}-out{out_version}.zarr"
                        self.run_ok(2, "--dims", "lat,lon,time", "--zarr-format",
                                    str(out_version), store, out)
                        self.assertStoreHolds(expected, out, out_version)
                        self.run_ok(1, "verify", "--dims", "lat,lon,time", store, out)
        self.assertEqual(self.leftovers(), [])

    def assertXarrayAlike(self, store, nc):
        a, b = xarray.open_zarr(self.path(store)).load(), xarray.open_dataset(self.path(nc)).load()
        for name, var in a.variables.items():
            got = b[name].transpose(*var.dims)
            self.assertEqual(got.dtype, var.dtype, name)
            self.assertTrue(np.array_equal(got.values, var.values, equal_nan=True), name)

    def test_joined_stores(self):
        for k, (first, nt) in enumerate(((0, 5), (5, NT - 5))):
            big_endian_dataset(first, nt).to_zarr(self.path(f"part{k}.zarr"),
                                                  encoding={"tas": {"chunks": (1, NY, NX)}})
        big_endian_dataset().to_zarr(self.path("whole.zarr"))
        expected = ref.read_store(self.path("whole.zarr"))
        self.run_ok(2, "--concat", "time", "--dims", "lat,lon,time", "part0.zarr", "part1.zarr",
                    "joined.nc")
        self.assertNetcdfHolds(expected, "joined.nc")
        self.run_ok(2, "verify", "--concat", "time", "--dims", "lat,lon,time", "part0.zarr",
                    "part1.zarr", "joined.nc")
        self.assertEqual(self.leftovers(), [])
        if NC_PUT_FAULT:  # the stores' own views right, the joined one's times damaged
            result = self.xpose(2, "--concat", "time", "--dims", "lat,lon,time", "part0.zarr",
                                "part1.zarr", "damaged.nc",
                                env={"LD_PRELOAD": NC_PUT_FAULT, "NC_PUT_FAULT": "flip",
                                     "NC_PUT_FAULT_FILE": "damaged.nc.xpose-netcdf4",
                                     "NC_PUT_FAULT_VAR": "time_bnds"})
            self.assertEqual(result.returncode, 1, result)
            self.assertIn("part0.zarr/time_bnds: its values in xpose's netCDF-4 view differ",
                          result.stderr)
            self.assertFalse(os.path.exists(self.path("damaged.nc")))
            self.assertEqual(self.leftovers(), [])

    def test_a_stopped_run_resumes_to_the_same_values(self):
        values = np.random.default_rng(3).random((600, 20, 30)).astype(">f4")
        xarray.Dataset({"tas": (("time", "lat", "lon"), values)},
                       coords={"time": ("time", np.arange(600, dtype=">f8") * 0.25)}).to_zarr(
            self.path("in.zarr"), encoding={"tas": {"chunks": (1, 20, 30)}})
        expected = ref.read_store(self.path("in.zarr"))
        args = ["--memory", "64K", "--checkpoint", "0", "--dims", "lat,lon,time", "in.zarr",
                "out.nc"]
        proc = start(2, [XPOSE, *args], cwd=self.dir)
        if wait_for_record(proc, self.path("out.nc.xpose-partial"),
                           lambda r: int(r["passes_done"]) >= 3) is None:
            self.fail(f"no pass was recorded\n{finish(proc)}")
        os.kill(proc.pid, signal.SIGUSR1)
        self.assertEqual(finish(proc).returncode, 4)
        self.assertIn("(resumed)", self.run_ok(2, "--resume", *args).stdout)
        self.assertNetcdfHolds(expected, "out.nc")
        self.assertEqual(self.leftovers(), [])

    @unittest.skipIf(not NC_PUT_FAULT, "the nc_put_vara shim was not built")
    def test_a_view_netcdf_writes_wrongly_is_caught_or_mended(self):
        ds = big_endian_dataset()
        ds.to_zarr(self.path("be.zarr"))
        expected = ref.read_store(self.path("be.zarr"))
        shim = {"LD_PRELOAD": NC_PUT_FAULT}
        # every value reversed: the big-endian arrays probed and mended, the
        # little-endian lon caught by the read-back of the view
        for fault, arrays in (("swap", "be.zarr/lon"), ("flip", "be.zarr/")):
            with self.subTest(fault=fault):
                result = self.xpose(2, "--dims", "lat,lon,time", "be.zarr", "out.nc",
                                    env={**shim, "NC_PUT_FAULT": fault})
                self.assertEqual(result.returncode, 1, result)
                self.assertIn(arrays, result.stderr)
                self.assertIn("in xpose's netCDF-4 view differ from the store's", result.stderr)
                self.assertFalse(os.path.exists(self.path("out.nc")))
                self.assertEqual(self.leftovers(), [])
        ds.drop_vars("lon").to_zarr(self.path("all-big.zarr"))
        self.run_ok(2, "--dims", "lat,time", "all-big.zarr", "out.nc",
                    env={**shim, "NC_PUT_FAULT": "swap"})
        del expected["lon"]
        self.assertNetcdfHolds(expected, "out.nc")


if __name__ == "__main__":
    unittest.main()
