"""End to end: the ways the data can move give the same exact transpose.
Contiguous datasets with every rank on one node move raw (at their file
offsets, a reader and a writer thread at once, each rank transposing its
own part of each pass); `--io mpi-io` forces HDF5's collective path, and
XPOSE_IO_THREAD=0 runs either without I/O threads.  Odd and prime shapes,
2-byte to 16-byte elements, 1 to 4 ranks, ranks that own no rows; passes
under 1 MiB per rank take the collective path.  A file
system that loses writes without saying so is caught by the read-back, and
nothing is published.  (Stops, kills and resumes, test_resume and
test_hostile, and full disks and failed writes, test_faults, run the
default path: raw where it can be.)"""

import json
import os
import unittest

from harness import ToolTestCase, digest, pattern

WRITE_FAULT = os.environ.get("XPOSE_WRITE_FAULT", "")

PATHS = {  # name: (extra arguments, environment, what --verbose says)
    "raw": ([], {}, "raw I/O at the datasets' file offsets, a thread each"),
    "raw, no thread": ([], {"XPOSE_IO_THREAD": "0"}, "one after the other: raw I/O"),
    "mpi-io": (["--io", "mpi-io"], {}, "HDF5's collective MPI-IO on the I/O thread"),
    "mpi-io, no thread": (["--io", "mpi-io"], {"XPOSE_IO_THREAD": "0"},
                          "one after the other: HDF5's collective MPI-IO"),
}


class IoPaths(ToolTestCase):
    def test_every_path_gives_the_exact_transpose(self):
        # Passes of at least 1 MiB per rank, which raw access needs; the
        # first in 2 to 6 passes.
        # Rank 3 owns no rows of (3, 300000), which the collective path
        # splits, and no columns of (1000003, 3), which raw passes split.
        cases = [((4099, 1021), "<f8", "32M"), ((3, 300000), "<f8", "64M"),
                 ((300007, 11), "<i2", "256M"), ((1000003, 3), "<i2", "256M"),
                 ((2003, 301), "V16", "256M")]
        for shape, dtype, memory in cases:
            data = pattern(shape, dtype) if dtype != "V16" else pattern(shape + (2,), "<u8").view(
                "V16").reshape(shape)
            self.write_h5("in.h5", {"/m": data})
            for ranks in (1, 2, 4):
                for name, (args, env, says) in PATHS.items():
                    with self.subTest(shape=shape, dtype=dtype, ranks=ranks, path=name):
                        result = self.xpose(ranks, "-v", "--memory", memory, *args, "in.h5",
                                            "out.h5", env=env)
                        self.assertEqual(result.returncode, 0, result)
                        self.assertIn(says, result.stderr)
                        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
                        os.remove(self.path("out.h5"))

    def test_raw_passes_come_in_at_least_16_bands(self):
        """A budget that holds the whole matrix still gets 16 whole-row
        bands (a pipeline of fewer passes reads the first and writes the
        last with nothing beside them), 2 pages tall and 1 MiB per rank."""
        self.write_h5("in.h5", {"/m": pattern((32771, 256), "<f4")})  # 32 MiB
        for ranks in (1, 2):
            with self.subTest(ranks=ranks):
                result = self.xpose(ranks, "-v", "--memory", "1G", "in.h5", "out.h5")
                self.assertEqual(result.returncode, 0, result)
                self.assertIn("16 pass(es): 16 x 1 grid of blocks up to 2049 x 256", result.stderr)
                self.assertIn("raw I/O", result.stderr)
                self.assertTransposed("in.h5", "/m", "out.h5", "/m")
                os.remove(self.path("out.h5"))

    def test_small_passes_take_the_collective_path(self):
        """Under 1 MiB per rank, runs are too short for raw requests."""
        self.write_h5("in.h5", {"/m": pattern((307, 211), "<f8")})
        result = self.xpose(2, "-v", "--memory", "64K", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("HDF5's collective MPI-IO", result.stderr)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")

    def test_chunked_datasets_take_the_collective_path(self):
        self.write_h5("in.h5", {"/m": pattern((120, 90), "<f8")})
        result = self.xpose(2, "-v", "--memory", "32K", "--layout", "chunked=16x16", "in.h5",
                            "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("HDF5's collective MPI-IO", result.stderr)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")

    @unittest.skipUnless(WRITE_FAULT, "the write-fault shim was not built")
    def test_lost_writes_are_caught_and_nothing_is_published(self):
        self.write_h5("in.h5", {"/m": pattern((1031, 1021), "<f8")})  # 8 MiB, raw passes
        before = digest(self.path("in.h5"))
        for ranks in (1, 2, 3):
            with self.subTest(ranks=ranks):
                env = {"LD_PRELOAD": WRITE_FAULT, "WRITE_FAULT_PATH": "out.h5.xpose-partial",
                       "WRITE_FAULT_AFTER": "2000000", "WRITE_FAULT_LOSE": "1",
                       "XPOSE_ABORT_TIMEOUT": "5"}
                result = self.xpose(ranks, "--json", "--memory", "32M", "in.h5", "out.h5",
                                    env=env)
                self.assertIn(result.returncode, (1, 3), result)  # 3: read back wrong
                self.assertFalse(os.path.exists(self.path("out.h5")), result)
                summary = json.loads([l for l in result.stdout.splitlines()
                                      if l.startswith("{")][0])
                self.assertEqual(summary["exit_code"], result.returncode)
                errors = [l for l in result.stderr.splitlines() if l.startswith("xpose: error:")]
                self.assertEqual(len(errors), 1, result)
                self.assertEqual(digest(self.path("in.h5")), before)
                for leftover in self.leftovers():
                    os.remove(leftover)


if __name__ == "__main__":
    unittest.main()
