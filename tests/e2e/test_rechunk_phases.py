"""End to end: rechunks (and moves of one step with the chunks given)
whose output chunks no pass of the budget holds whole, moved in two
phases through a scratch file (io/rechunk/): every value and chunk checked
by h5py and netCDF4-python, odd shapes, 4 axes, axes moved, 1 to 3 ranks
(some owning nothing), pretend nodes, whole netCDF-4 files and files
joined, the scratch file's space and write faults, stops and kills in
either phase resumed, and nothing left behind; the phases taken to share
the chunks out evenly, and the passes where their scratch does not fit."""

import os
import signal
import subprocess
import time
import unittest

import h5py
import numpy as np

from harness import (XPOSE, ToolTestCase, finish, ranks_of, start, wait_for_session_end,
                     with_environment)

try:
    import netCDF4
except ImportError:  # Debian's python3-netcdf4; jobs/setup.sh installs it
    netCDF4 = None

STOPPED = 4
WRITE_FAULT = os.environ.get("XPOSE_WRITE_FAULT", "")
PHASES = "moves in two phases through"


def field(shape, seed=0):
    """Smooth float32 values with noise, as model output (not a pattern
    deflate folds to nothing)."""
    rng = np.random.default_rng(seed)
    return (250 + np.cumsum(rng.standard_normal(shape), axis=-1)).astype("<f4")


class Phases(ToolTestCase):
    def write_records(self, a, chunks=None, shuffle=True, **kwargs):
        """in.h5:/c with one record (position of axis 0) a chunk, deflated."""
        chunks = chunks or (1, *a.shape[1:])
        with h5py.File(self.path("in.h5"), "w") as f:
            f.create_dataset("c", data=a, chunks=chunks, compression="gzip", shuffle=shuffle,
                             fillvalue=np.array(1e20, a.dtype) if a.dtype.kind == "f" else 0,
                             **kwargs)
            f["c"].attrs["units"] = "K"

    def rechunk(self, ranks, layout, memory, *extra, phases=True, axes=None, env=None):
        """in.h5:/c rechunked (or its axes moved: axes) into out.h5 with -v;
        its values and chunks checked, and whether it went in phases."""
        axes = axes or list(range(len(layout)))
        result = self.xpose(ranks, "-v", "--force", "--memory", memory, "--axes",
                            ",".join(map(str, axes)), "--layout",
                            "chunked=" + "x".join(map(str, layout)), *extra, "in.h5:/c", "out.h5",
                            env=env)
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(PHASES in result.stderr, phases, result)
        with h5py.File(self.path("in.h5"), "r") as a, h5py.File(self.path("out.h5"), "r") as b:
            self.assertEqual(b["c"].chunks, tuple(layout), result)
            self.assertEqual(b["c"].compression, "gzip")
            self.assertEqual(b["c"].shuffle, a["c"].shuffle)
            self.assertEqual(b["c"].fletcher32, a["c"].fletcher32)
            self.assertEqual(b["c"].fillvalue, a["c"].fillvalue)
            self.assertTrue(np.array_equal(b["c"][...], np.transpose(a["c"][...], axes)),
                            f"values differ\n{result}")
            self.assertEqual(b["c"].attrs["units"], "K")
        self.assertEqual(self.leftovers(), [])
        return result

    def test_shapes_types_and_ranks(self):
        # whole-series chunks; a series chunk that does not divide the
        # records; tiles cut at both edges; 8-byte values; input chunks of
        # several records; 4 axes
        cases = [
            ((400, 48, 64), "<f4", None, (400, 8, 8)),
            ((397, 45, 61), "<f4", None, (150, 8, 16)),
            ((203, 31, 37), "<f8", (7, 31, 37), (203, 5, 9)),
            ((120, 3, 30, 40), "<f4", None, (120, 1, 8, 8)),
        ]
        for shape, dtype, chunks, layout in cases:
            self.write_records(field(shape).astype(dtype), chunks)
            for ranks in (1, 2, 3):
                with self.subTest(shape=shape, ranks=ranks):
                    self.rechunk(ranks, layout, "3M")

    def test_axes_moved_too(self):
        # time series of tiles with the axes moved (--dims lat,lon,time
        # --chunks time/,lat/8,lon/8), and time moved between lat and lon
        self.write_records(field((400, 45, 61)))
        for axes, layout in (((1, 2, 0), (8, 8, 400)), ((1, 0, 2), (8, 400, 16)),
                             ((1, 2, 0), (9, 7, 400))):
            for ranks in (1, 3):
                with self.subTest(axes=axes, layout=layout, ranks=ranks):
                    self.rechunk(ranks, layout, "3M", axes=axes)
        result = self.xpose(2, "verify", "in.h5:/c", "out.h5:/c")
        self.assertEqual(result.returncode, 0, result)

    def test_filters_and_chunks_that_outgrow_their_room(self):
        # chunks gathered as byte planes (shuffle first, a checksum after
        # gzip as h5py orders them) or as values (gzip alone); every chunk
        # given too small a room (XPOSE_CHUNK_ROOM), so encoded again alone,
        # on ranks that hold different numbers of them
        a = field((400, 48, 64))
        for filters in ({}, {"fletcher32": True}, {"shuffle": False}):
            self.write_records(a, **filters)
            for room, ranks in ((None, 2), ("64", 1), ("64", 3)):
                env = {"XPOSE_CHUNK_ROOM": room} if room else None
                with self.subTest(filters=filters, room=room, ranks=ranks):
                    self.rechunk(ranks, (400, 8, 8), "3M", env=env)

    def test_pretend_nodes(self):
        # each rank its own node: the scratch file synced between the phases
        self.write_records(field((400, 48, 64)))
        for ranks in (2, 3):
            with self.subTest(ranks=ranks):
                self.rechunk(ranks, (400, 8, 8), "3M", env={"XPOSE_PRETEND_NODES": str(ranks)})

    def test_whole_chunks_still_take_the_passes(self):
        self.write_records(field((100, 20, 30)))
        self.rechunk(2, (100, 4, 5), "1G", phases=False)  # a pass holds them whole

    def test_verify_and_plan_name_the_phases(self):
        self.write_records(field((400, 48, 64)))
        self.rechunk(2, (400, 8, 8), "3M")
        result = self.xpose(2, "verify", "in.h5:/c", "out.h5:/c")
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("out.h5"), "r+") as f:
            f["c"][399, 47, 63] += 1
        self.assertEqual(self.xpose(2, "verify", "in.h5:/c", "out.h5:/c").returncode, 3)

    def with_fault(self, **fault):
        if not WRITE_FAULT:
            self.skipTest("the write-fault shim was not built")
        return {"LD_PRELOAD": WRITE_FAULT, "XPOSE_ABORT_TIMEOUT": "2",
                **{f"WRITE_FAULT_{k.upper()}": str(v) for k, v in fault.items()}}

    def test_even_shares_give_way_to_the_passes_where_no_scratch_fits(self):
        """3 bands of 16 latitudes on 2 ranks, which a pass would give 2
        and 1: the phases deal out the 12 chunks, 6 each; in a file system
        with room for the output (15 MB) but not the scratch file (25 MB
        at most), the passes move them instead, saying so."""
        self.write_records(field((2000, 48, 64)))
        args = ("-v", "--axes", "0,1,2", "--layout", "chunked=2000x16x16", "in.h5:/c")
        result = self.xpose(2, *args, "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("the passes would deal its 3 band(s) of whole output chunks to 2 rank(s) "
                      "unevenly, so it " + PHASES, result.stderr)
        with self.small_file_system("20m") as mnt:
            out = os.path.join(mnt, "out.h5")
            result = self.xpose(2, *args, out)
            self.assertEqual(result.returncode, 0, result)
            self.assertIn("its scratch file need 24.18 MiB more", result.stderr)
            self.assertIn("the passes move it instead, unevenly", result.stderr)
            with h5py.File(self.path("in.h5"), "r") as a, h5py.File(out, "r") as b:
                self.assertTrue(np.array_equal(a["c"][...], b["c"][...]))
            self.assertEqual(sorted(os.listdir(mnt)), ["out.h5"])

    def test_scratch_space_and_write_faults(self):
        self.write_records(field((2000, 48, 64)))
        args = ("--memory", "3M", "--axes", "0,1,2", "--layout", "chunked=2000x8x8", "in.h5:/c")
        with self.small_file_system("12m") as mnt:  # under the scratch file's 25 MB at most
            result = self.xpose(2, *args, os.path.join(mnt, "out.h5"))
            self.assertEqual(result.returncode, 1, result)
            self.assertIn("its scratch file", result.stderr)
            self.assertEqual(os.listdir(mnt), [], result)
        for path, error in (("xpose-scratch-1", "ENOSPC"), ("xpose-scratch-1", "EIO"),
                            ("xpose-partial", "ENOSPC")):
            with self.subTest(path=path, error=error):
                env = self.with_fault(path=path, after=2 << 20, errno=error)
                result = self.xpose(2, *args, "out.h5", env=env)
                self.assertEqual(result.returncode, 1, result)
                self.assertFalse(os.path.exists(self.path("out.h5")))
                self.assertEqual(self.leftovers(), [], result)

    def stopped_then_resumed(self, how, phase):
        """A run stopped (SIGUSR1) or killed (SIGKILL) in phase 1 or 2 (its
        writes there slowed down: tests/fault/write_fault.c), then the same
        command with --resume: the exact output."""
        a = field((1500, 48, 64))
        self.write_records(a)
        args = [XPOSE, "-v", "--memory", "3M", "--axes", "0,1,2", "--layout",
                "chunked=1500x8x8", "in.h5:/c", "out.h5"]
        slowed = "xpose-scratch-1" if phase == 1 else "xpose-partial"
        env = with_environment(self.with_fault(path=slowed, delay_us=100000))
        proc = start(2, args, cwd=self.dir, env=env)
        scratch = self.path("out.h5.xpose-scratch-1")
        deadline, size, still = time.time() + 60, -1, 0
        while time.time() < deadline and proc.poll() is None:
            now = os.stat(scratch).st_size if os.path.exists(scratch) else -1
            still = still + 1 if now == size and now > 0 else 0
            size = now
            if (phase == 1 and size > 0) or (phase == 2 and still >= 30):
                break  # phase 1 has written; or its file has stopped growing
            time.sleep(0.01)
        for pid in ranks_of(proc) if how == signal.SIGKILL else [proc.pid]:
            os.kill(pid, how)
        result = finish(proc)
        wait_for_session_end(proc)
        self.assertIn(result.returncode, (STOPPED, -how, 137), result)
        self.assertFalse(os.path.exists(self.path("out.h5")))
        result = self.xpose(3, "--resume", *args[1:])
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertTrue(np.array_equal(f["c"][...], a))
            self.assertEqual(f["c"].chunks, (1500, 8, 8))
        self.assertEqual(self.leftovers(), [])

    def test_stop_then_resume(self):
        for phase in (1, 2):
            with self.subTest(phase=phase):
                self.stopped_then_resumed(signal.SIGUSR1, phase)
                os.remove(self.path("out.h5"))

    def test_kill_then_resume(self):
        for phase in (1, 2):
            with self.subTest(phase=phase):
                self.stopped_then_resumed(signal.SIGKILL, phase)
                os.remove(self.path("out.h5"))


@unittest.skipIf(netCDF4 is None, "netCDF4-python is not installed (Debian: python3-netcdf4)")
class PhasesNetcdf(ToolTestCase):
    def write_nc(self, name, times, lats=36, lons=48, first=0):
        with netCDF4.Dataset(self.path(name), "w", format="NETCDF4") as nc:
            nc.title = "phases test"
            nc.createDimension("time", None)
            nc.createDimension("lat", lats)
            nc.createDimension("lon", lons)
            nc.createVariable("time", "f8", ("time",))[:] = np.arange(first, first + times)
            nc.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-89, 89, lats)
            nc.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 359, lons)
            for k, v in enumerate(("tas", "pr")):  # pr checksummed: netCDF-C's filters
                var = nc.createVariable(v, "f4", ("time", "lat", "lon"), zlib=True, complevel=4,
                                        shuffle=True, chunksizes=(1, lats, lons),
                                        fill_value=np.float32(1e20), fletcher32=v == "pr")
                var.units = "K"
                var[:] = field((times, lats, lons), seed=k + first)

    def test_whole_file_into_time_series(self):
        times = 500
        self.write_nc("in.nc", times)
        spec = "time/,lat/8,lon/8"
        result = self.xpose(2, "-v", "--memory", "3M", "--chunks", spec, "in.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(result.stderr.count(PHASES), 2, result)  # tas and pr
        with netCDF4.Dataset(self.path("in.nc")) as a, netCDF4.Dataset(self.path("out.nc")) as b:
            self.assertTrue(b.dimensions["time"].isunlimited())
            self.assertEqual(b.title, a.title)
            for name, var in a.variables.items():
                self.assertTrue(np.array_equal(b[name][...], var[...]), name)
            for v in ("tas", "pr"):
                self.assertEqual(b[v].chunking(), [times, 8, 8])
                self.assertEqual(b[v].filters()["zlib"], True)
                self.assertEqual(b[v].filters()["fletcher32"], v == "pr")
                self.assertEqual(b[v].units, "K")
        if subprocess.run(["which", "ncdump"], capture_output=True).returncode == 0:
            dump = subprocess.run(["ncdump", "-hs", "out.nc"], cwd=self.dir, check=True,
                                  capture_output=True, text=True).stdout
            self.assertIn(f"tas:_ChunkSizes = {times}, 8, 8 ;", dump)
        self.assertEqual(self.leftovers(), [])

    def test_a_budget_under_the_phases_least_is_refused_naming_it(self):
        # 2000 x 16 x 16 float32 chunks (2 MiB): the phases need about two
        # a rank; --plan and the run say the least, and nothing is left.
        self.write_nc("in.nc", 2000, lats=32, lons=32)
        for plan in ((), ("--plan",)):
            with self.subTest(plan=plan):
                result = self.xpose(2, *plan, "--memory", "256K", "--chunks",
                                    "time/,lat/16,lon/16", "in.nc", "out.nc")
                self.assertEqual(result.returncode, 1, result)
                self.assertRegex(result.stderr, r"xpose: error: in\.nc:/(tas|pr): --memory "
                                 r"256\.00 KiB is too small for the chunks asked for: .* need "
                                 r"--memory [0-9.]+ MiB per rank at least")
                self.assertFalse(os.path.exists(self.path("out.nc")))
                self.assertEqual(self.leftovers(), [])

    def test_files_joined_into_time_series(self):
        for k, name in enumerate(("y1.nc", "y2.nc", "y3.nc")):
            self.write_nc(name, 200, first=200 * k)
        result = self.xpose(2, "-v", "--memory", "3M", "--chunks", "time/,lat/8,lon/8", "y1.nc",
                            "y2.nc", "y3.nc", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(result.stderr.count(PHASES), 2, result)
        with netCDF4.Dataset(self.path("out.nc")) as b:
            for v in ("tas", "pr"):
                parts = []
                for name in ("y1.nc", "y2.nc", "y3.nc"):
                    with netCDF4.Dataset(self.path(name)) as a:
                        parts.append(a[v][...])
                self.assertTrue(np.array_equal(b[v][...], np.concatenate(parts)), v)
                self.assertEqual(b[v].chunking(), [600, 8, 8])
            self.assertTrue(np.array_equal(b["time"][...], np.arange(600)))
        self.assertEqual(self.leftovers(), [])


if __name__ == "__main__":
    unittest.main()
