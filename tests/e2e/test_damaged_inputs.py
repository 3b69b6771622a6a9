"""End to end: damaged netCDF-4 and HDF5 inputs through the tool (issue
67; tests/test_damaged_hdf5.c fuzzes thousands of them below the tool).
Metadata that crashes HDF5 (a DIMENSION_LIST whose global heap object is
damaged: found by mutating a CF file's heap from a fixed seed until HDF5
crashes reading it), a chunk B-tree whose key leaves the chunk grid
(HDF5's H5Dread then misses a chunk that H5Dget_chunk_info finds), and a
superblock whose base address moved: each run exits 1 with one message
naming the file, on every rank, nothing published, the input untouched."""

import os
import random
import subprocess
import unittest

import h5py
import numpy as np

from harness import XPOSE, ToolTestCase, digest

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4
    netCDF4 = None


class Damaged(ToolTestCase):
    def refused(self, name, message, *args):
        before = digest(self.path(name))
        result = self.xpose(2, *args, name, "out.nc")
        self.assertEqual(result.returncode, 1, result)
        self.assertRegex(result.stderr, message)
        self.assertEqual(result.stderr.count("xpose: error:"), 1, result.stderr)
        self.assertFalse(os.path.exists(self.path("out.nc")))
        self.assertEqual(self.leftovers(), [])
        self.assertEqual(digest(self.path(name)), before)

    @unittest.skipIf(netCDF4 is None, "python3-netcdf4 is not installed")
    def test_metadata_that_crashes_hdf5_is_refused(self):
        with netCDF4.Dataset(self.path("seed.nc"), "w") as d:
            d.createDimension("time", None)
            d.createDimension("lat", 8)
            d.createDimension("lon", 10)
            for axis, n in (("time", 12), ("lat", 8), ("lon", 10)):
                d.createVariable(axis, "f8", (axis,))[:] = np.arange(n)
            v = d.createVariable("tas", "f4", ("time", "lat", "lon"), zlib=True,
                                 chunksizes=(1, 8, 10))
            v.units, v[:] = "K", np.ones((12, 8, 10), "f4")
        with open(self.path("seed.nc"), "rb") as f:
            seed = f.read()
        heap, rng = seed.find(b"GCOL"), random.Random(67)
        self.assertGreater(heap, 0)
        for _ in range(3000):  # HDF5 crashes on about one in a hundred
            damaged = bytearray(seed)
            for _ in range(rng.randint(1, 3)):
                damaged[heap + rng.randrange(200)] = rng.randrange(256)
            with open(self.path("in.nc"), "wb") as f:
                f.write(damaged)
            walk = subprocess.run([XPOSE, "--metadata-walk", self.path("in.nc")],
                                  capture_output=True, timeout=60)
            if walk.returncode < 0:
                break
        else:
            self.skipTest("no damage of the heap crashed this HDF5")
        self.refused("in.nc", r"xpose: error: in\.nc: its metadata is damaged: HDF5 crashes "
                     r"reading it", "--dims", "lat,lon,time")

    def damaged_matrix(self):
        """in.h5:/m, 64 x 48 int32 in gzip chunks of 8 x 12, the old B-tree."""
        with h5py.File(self.path("in.h5"), "w", libver="earliest") as f:
            f.create_dataset("m", data=np.arange(64 * 48, dtype="<i4").reshape(64, 48),
                             chunks=(8, 12), compression="gzip")
        with open(self.path("in.h5"), "rb") as f:
            return bytearray(f.read())

    def test_a_chunk_b_tree_off_its_grid_is_refused(self):
        data = self.damaged_matrix()
        tree = data.find(b"TREE", data.find(b"TREE") + 1)  # the chunks' (the group's first)
        self.assertEqual(data[tree + 4], 1)  # node type 1: raw data chunks
        key = tree + 24  # the first key: size, mask, then one offset an axis and the element's
        data[key + 8 + 8 * 2 + 7] = 0x40  # the element's offset: never anything but 0
        with open(self.path("in.h5"), "wb") as f:
            f.write(data)
        self.refused("in.h5", r"xpose: error: .*in\.h5:/m: the file is damaged: a chunk's key is "
                     r"off the chunk grid \(the B-tree node at byte [0-9]+\)")

    def test_a_superblock_whose_base_moved_is_refused(self):
        data = self.damaged_matrix()
        data[24] = 133  # the base address: HDF5 would read every address 133 bytes on
        with open(self.path("in.h5"), "wb") as f:
            f.write(data)
        self.refused("in.h5", r"xpose: error: .*in\.h5:/m: the file is damaged: its superblock's "
                     r"base address 133 is not 0")


if __name__ == "__main__":
    unittest.main()
