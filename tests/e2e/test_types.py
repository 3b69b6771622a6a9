"""End to end: xpose transposes datasets of every kind of fixed-size type,
keeps the exact datatype (byte order included) and the attributes, on 1 to
4 ranks, checked against numpy's .T by h5py."""

import os
import unittest

import h5py
import numpy as np

from harness import ToolTestCase, pattern

DTYPES = {
    "int8": "i1",
    "uint16_be": ">u2",
    "int32": "<i4",
    "int64_be": ">i8",
    "float32": "<f4",
    "float64_be": ">f8",
    "complex64": "<c8",
    "complex128_be": ">c16",
    "string7": "S7",
    "opaque5": "V5",
    "compound": [("a", "<i4"), ("b", ">f8"), ("c", "S3")],
}


class Types(ToolTestCase):
    def check(self, dtype, shape, ranks, *extra):
        data = pattern(shape, dtype)
        self.write_h5("in.h5", {"/data": data})
        result = self.xpose(ranks, *extra, "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/data", "out.h5", "/data")
        self.assertEqual(self.leftovers(), [])

    def test_every_dtype_on_two_ranks(self):
        for name, dtype in DTYPES.items():
            with self.subTest(dtype=name):
                self.check(dtype, (37, 23), 2, "--force")

    def test_prime_shapes_and_rank_counts(self):
        for ranks in (1, 3, 4):
            for shape in ((97, 89), (1, 301), (301, 1), (2, 3)):
                with self.subTest(ranks=ranks, shape=shape):
                    self.check("<f8", shape, ranks, "--force", "--verify")

    def test_sparse_chunked_inputs(self):
        # Chunks never written read as the fill value (datasets filled region by region).
        with h5py.File(self.path("sparse.h5"), "w") as f:
            d = f.create_dataset("m", (301, 257), dtype="<f4", chunks=(32, 32), fillvalue=-7.5)
            d[0:32, 0:32] = 1.0
            d[100:150, 200:257] = pattern((50, 57), "<f4")
            z = f.create_dataset("z", (97, 130), dtype="<i8", chunks=(16, 16), fillvalue=42,
                                 compression="gzip", shuffle=True)
            z[40:60, 5:9] = pattern((20, 4), "<i8")
        for ranks in (1, 2, 3, 4):
            for name in ("m", "z"):
                with self.subTest(ranks=ranks, dataset=name):
                    result = self.xpose(ranks, "--force", "--memory", "32K", f"sparse.h5:/{name}",
                                        "out.h5")
                    self.assertEqual(result.returncode, 0, result)
                    self.assertTransposed("sparse.h5", f"/{name}", "out.h5", f"/{name}")
                    with h5py.File(self.path("out.h5"), "r") as f:
                        self.assertEqual(f[name].fillvalue, {"m": -7.5, "z": 42}[name],
                                         "the fill value was not kept")

    def test_dimension_labels_follow_the_axes(self):
        with h5py.File(self.path("in.h5"), "w") as f:
            d = f.create_dataset("m", data=pattern((5, 3), "<f4"))
            d.dims[0].label = "time"
            d.dims[1].label = "station"
            d.attrs["units"] = "K"
        result = self.xpose(2, "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(result.stderr.count("warning"), 0, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertEqual([f["m"].dims[i].label for i in range(2)], ["station", "time"])

    def test_attributes_and_group_paths(self):
        data = pattern((19, 31), ">i2")
        attrs = {
            "units": "kelvin",                             # variable-length string
            "scale": np.float64(0.5),
            "fixed": np.bytes_("abc"),                     # fixed-length string
            "vector": np.arange(5, dtype=">i4"),
            "big": np.arange(20000, dtype="<f8"),          # > 64 KiB: dense storage
            "pair": np.array((1, 2.5), dtype=[("x", "<i4"), ("y", "<f8")]),
        }
        self.write_h5("in.h5", {"/group/inner/m": data, "/other/vector": np.arange(4)},
                      {"/group/inner/m": attrs}, libver="v108")
        result = self.xpose(2, "in.h5", "out.h5:/results/t")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/group/inner/m", "out.h5", "/results/t")
        self.assertIn("in.h5:/group/inner/m (19 x 31, int16 BE)", result.stdout)

    def test_named_dataset_among_several(self):
        self.write_h5("in.h5", {"/a": pattern((5, 7), "<u4"), "/b": pattern((6, 4), "<u4", 1)})
        result = self.xpose(3, "in.h5:/b", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/b", "out.h5", "/b")

    def test_force_replaces_an_existing_output(self):
        self.write_h5("in.h5", {"/data": pattern((9, 11), "<f4")})
        self.write_h5("out.h5", {"/old": np.zeros(3)})
        result = self.xpose(2, "--force", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/data", "out.h5", "/data")

    def test_array_type(self):
        # An HDF5 array type: h5py shows each element as a trailing axis.
        data = pattern((13, 8, 3), "<f4")
        with h5py.File(self.path("in.h5"), "w") as f:
            f.create_dataset("/data", shape=(13, 8), dtype=np.dtype(("<f4", (3,))))[...] = data
        result = self.xpose(3, "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertEqual(f["/data"].dtype, np.dtype(("<f4", (3,))))
            self.assertTrue(np.array_equal(f["/data"][...], data.transpose(1, 0, 2)))

    def test_backend_choice(self):
        self.write_h5("in.h5", {"/data": pattern((33, 65), "<f8")})
        host = self.xpose(2, "--backend", "host", "in.h5", "out.h5")
        self.assertEqual(host.returncode, 0, host)
        self.assertIn("2 rank(s) (host, mpi)", host.stdout)
        self.assertTransposed("in.h5", "/data", "out.h5", "/data")
        # With a GPU per rank: a correct transpose on them; without: one clear
        # usage error for --backend cuda, and auto on the host with one note
        # saying why (where xpose was built with CUDA).
        cuda = self.xpose(2, "--backend", "cuda", "--force", "in.h5", "out2.h5")
        auto = self.xpose(2, "in.h5", "out3.h5")
        self.assertEqual(auto.returncode, 0, auto)
        self.assertTransposed("in.h5", "/data", "out3.h5", "/data")
        if cuda.returncode == 0:
            self.assertIn("2 rank(s) (cuda, ", cuda.stdout)
            self.assertTransposed("in.h5", "/data", "out2.h5", "/data")
            self.assertIn("2 rank(s) (cuda, ", auto.stdout)
        else:
            self.assertEqual(cuda.returncode, 2, cuda)
            self.assertEqual(cuda.stderr.count("xpose: error: --backend cuda: "), 1, cuda)
            self.assertFalse(os.path.exists(self.path("out2.h5")))
            self.assertEqual(self.leftovers(), [])
            self.assertIn("2 rank(s) (host, mpi)", auto.stdout)
            # no GPU on any rank: nothing to say, but with --verbose
            self.assertNotIn("note", auto.stderr, auto)
            built_with_cuda = "CUDA backend" in self.xpose(1, "--version").stdout
            verbose = self.xpose(2, "--verbose", "--force", "in.h5", "out3.h5")
            self.assertEqual(verbose.returncode, 0, verbose)
            said = verbose.stderr.count("xpose: transposing on the host (--backend host says so): "
                                        "rank 0 can use no GPU")
            self.assertEqual(said, 1 if built_with_cuda else 0, verbose)
            self.assertNotIn("driver version is insufficient", verbose.stderr)

    def test_empty_dimension(self):
        self.write_h5("in.h5", {"/data": np.zeros((0, 5), dtype="<f4")})
        result = self.xpose(2, "--verify", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        b, _, _ = self.read_h5("out.h5", "/data")
        self.assertEqual(b.shape, (5, 0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
