"""End to end: N-D datasets and their axes (--axes, --dims).  Every
move (one run of adjacent axes moved in front of the run before it, the
axes before and after both in place) of 3-, 4- and 5-D datasets, and every
order of 3 and 4 axes (up to two moves, through scratch files, a move
reordering the axes in front), and orders of 5 axes that take two and three
moves, against numpy's transpose, at 1 to 3 ranks, odd sizes, element sizes 1 to 16 bytes,
contiguous (raw) and chunked, compressed outputs, in passes far smaller
than the data; numpy's .T by default; orders of more moves refused with one
message and nothing written; names from netCDF dimensions and from labels; resuming
and `xpose verify` on N-D outputs."""

import itertools
import os
import signal
import unittest

import h5py
import numpy as np

from harness import ToolTestCase, XPOSE, finish, pattern, resume_record, start, wait_for_record

USAGE = 2
DTYPES = ["<f4", "u1", "<i2", "<f8", "<c16"]
STORAGES = [{}, {"chunks": True}, {"chunks": True, "compression": "gzip", "shuffle": True}]


def moves(ndims):
    """The (lead, split, trail) folds: the permutations xpose makes."""
    return [(l, s, t) for l in range(ndims) for s in range(l + 1, ndims)
            for t in range(s + 1, ndims + 1)]


def order_of(ndims, lead, split, trail):
    return (list(range(lead)) + list(range(split, trail)) + list(range(lead, split)) +
            list(range(trail, ndims)))


class Axes(ToolTestCase):
    def write(self, shape, dtype, storage=None, name="in.h5"):
        data = pattern(shape, dtype)
        with h5py.File(self.path(name), "w") as f:
            f.create_dataset("v", data=data, **(storage or {}))
        return data

    def assertPermuted(self, data, order, out="out.h5"):
        with h5py.File(self.path(out), "r") as f:
            got = f["v"][...]
        self.assertEqual(got.shape, tuple(data.shape[i] for i in order))
        self.assertTrue(np.array_equal(got, data.transpose(order)), f"wrong data for {order}")

    def test_every_move_of_3_4_and_5_axes(self):
        shapes = {3: (7, 5, 3), 4: (5, 3, 4, 3), 5: (3, 4, 2, 3, 5)}
        case = 0
        for ndims, shape in shapes.items():
            for lead, split, trail in moves(ndims):
                dtype = DTYPES[case % len(DTYPES)]
                storage = STORAGES[case % len(STORAGES)]
                ranks = 1 + case % 3
                case += 1
                order = order_of(ndims, lead, split, trail)
                with self.subTest(shape=shape, order=order, dtype=dtype, storage=storage,
                                  ranks=ranks):
                    data = self.write(shape, dtype, storage)
                    # An element carries the axes after the moved ones.
                    element = data.itemsize * int(np.prod(shape[trail:]))
                    budget = str(max(1024, 16 * element))
                    result = self.xpose(ranks, "--force", "--memory", budget, "--axes",
                                        ",".join(map(str, order)), "in.h5", "out.h5")
                    self.assertEqual(result.returncode, 0, result)
                    self.assertPermuted(data, order)
                    result = self.xpose(ranks, "verify", "--axes", ",".join(map(str, order)),
                                        "in.h5", "out.h5")
                    self.assertEqual(result.returncode, 0, result)

    def test_every_order_of_3_and_4_axes(self):
        shapes = {3: (7, 5, 3), 4: (5, 3, 4, 3)}
        case = 0
        for ndims, shape in shapes.items():
            for order in itertools.permutations(range(ndims)):
                if list(order) == list(range(ndims)):
                    continue
                dtype = DTYPES[case % len(DTYPES)]
                storage = STORAGES[case % len(STORAGES)]
                ranks = 1 + case % 4
                case += 1
                with self.subTest(shape=shape, order=order, dtype=dtype, storage=storage,
                                  ranks=ranks):
                    data = self.write(shape, dtype, storage)
                    axes = ",".join(map(str, order))
                    budget = str(16 * data.itemsize * int(np.prod(shape[1:])))
                    result = self.xpose(ranks, "--force", "--memory", budget, "--axes", axes,
                                        "in.h5", "out.h5")
                    self.assertEqual(result.returncode, 0, result)
                    self.assertPermuted(data, order)
                    self.assertEqual(self.leftovers(), [])
                    result = self.xpose(ranks, "verify", "--axes", axes, "in.h5", "out.h5")
                    self.assertEqual(result.returncode, 0, result)

    def test_orders_of_5_axes_in_two_and_three_moves(self):
        # reversed (two moves); 2,4,1,3,0 and 4,1,3,2,0 (three, the axes in
        # front reordered on the way); 1,0,3,2,4 (one move that reorders)
        shape = (3, 4, 2, 5, 3)
        for case, order in enumerate(((4, 3, 2, 1, 0), (2, 4, 1, 3, 0), (4, 1, 3, 2, 0),
                                      (1, 0, 3, 2, 4))):
            dtype, storage = DTYPES[case % len(DTYPES)], STORAGES[case % len(STORAGES)]
            ranks = 2 + case % 2
            with self.subTest(order=order, dtype=dtype, storage=storage, ranks=ranks):
                data = self.write(shape, dtype, storage)
                axes = ",".join(map(str, order))
                result = self.xpose(ranks, "--force", "--memory", "2K", "--axes", axes, "in.h5",
                                    "out.h5")
                self.assertEqual(result.returncode, 0, result)
                self.assertPermuted(data, order)
                self.assertEqual(self.leftovers(), [])
                result = self.xpose(ranks, "verify", "--axes", axes, "in.h5", "out.h5")
                self.assertEqual(result.returncode, 0, result)

    def test_n_d_default_reverses_the_axes(self):
        data = self.write((4, 3, 5, 2), "<i2")
        result = self.xpose(3, "--memory", "1K", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("; all axes reversed, as numpy's .T)", result.stdout)
        self.assertPermuted(data, [3, 2, 1, 0])
        result = self.xpose(2, "verify", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        with h5py.File(self.path("out.h5"), "r+") as f:  # one value off: caught
            f["v"][1, 2, 0, 3] += 1
        result = self.xpose(2, "verify", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 3, result)

    def test_empty_axes_anywhere(self):
        for shape, order in (((3, 4, 0), [1, 0, 2]), ((3, 0, 2), [1, 2, 0]),
                             ((0, 3, 2), [2, 0, 1])):
            with self.subTest(shape=shape, order=order):
                data = self.write(shape, "<f4")
                result = self.xpose(2, "--force", "--axes", ",".join(map(str, order)), "in.h5",
                                    "out.h5")
                self.assertEqual(result.returncode, 0, result)
                self.assertPermuted(data, order)

    def test_raw_and_collective_paths_give_the_same_file(self):
        data = self.write((29, 13, 11), "<f4")  # contiguous: raw on one node
        order = [1, 2, 0]
        for io in ("auto", "mpi-io"):
            for ranks in (2, 3):
                with self.subTest(io=io, ranks=ranks):
                    result = self.xpose(ranks, "--force", "--io", io, "--memory", "2K", "--axes",
                                        "1,2,0", "in.h5", "out.h5")
                    self.assertEqual(result.returncode, 0, result)
                    self.assertPermuted(data, order)

    def test_other_orders_are_refused_with_one_message(self):
        # 7 axes: too many to search with the axes in front reordered
        self.write((2, 3, 2, 3, 2, 3, 2), "<f4", name="seven.h5")
        for order, why in (("6,5,4,3,2,1,0", "more than 3 moves"),
                           ("0,1,2,3,4,5,6", "nothing to transpose")):
            with self.subTest(order=order):
                result = self.xpose(2, "--axes", order, "seven.h5", "out.h5")
                self.assertEqual(result.returncode, USAGE, result)
                self.assertEqual(result.stderr.count("xpose: error:"), 1, result)
                self.assertIn(why, result.stderr)
                self.assertEqual(self.leftovers(), [])
                self.assertFalse(os.path.exists(self.path("out.h5")))
        result = self.xpose(2, "seven.h5", "out.h5")  # its reversal, the default
        self.assertEqual(result.returncode, USAGE, result)
        self.assertIn("give the output's axis order with --dims", result.stderr)
        self.write((4, 3, 2, 5), "<f4")
        for bad, why in (("0,1", "names 2 axes"), ("0,1,2,4", "is not an axis"),
                         ("1,1,0,2", "twice"), ("x", "is not an axis")):
            with self.subTest(axes=bad):
                result = self.xpose(2, "--axes", bad, "in.h5", "out.h5")
                self.assertEqual(result.returncode, USAGE, result)
                self.assertIn(why, result.stderr)

    def test_a_run_stopped_in_its_second_move_resumes_there(self):
        # (z, y, x): two moves, the first into a scratch file
        data = self.write((120, 68, 60), "<f4")
        args = ["--memory", "4K", "--checkpoint", "0", "--axes", "2,1,0", "in.h5", "out.h5"]
        proc = start(2, [XPOSE, *args], cwd=self.dir)
        partial = self.path("out.h5.xpose-partial")
        wait_for_record(proc, partial, lambda r: r["move"].startswith("1 ") and
                        int(r["passes_done"]) >= 20, timeout=120, poll=0.02)
        os.kill(proc.pid, signal.SIGUSR1)
        result = finish(proc)
        self.assertEqual(result.returncode, 4, result)
        self.assertIn("passes of move 2 of 2", result.stderr)
        self.assertTrue(os.path.exists(self.path("out.h5.xpose-scratch-1")))
        result = self.xpose(3, "--resume", "--memory", "8K", "--axes", "2,1,0", "in.h5",
                            "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("(resumed)", result.stdout)
        self.assertPermuted(data, [2, 1, 0])
        self.assertEqual(self.leftovers(), [])

    def test_a_run_stopped_in_a_move_that_reorders_the_axes_in_front_resumes(self):
        # (t, z, y, x) reversed in two moves: the first transposes (y, x) in
        # each (t, z) matrix and writes those in (z, t) order
        data = self.write((30, 7, 20, 24), "<f4")
        args = ["--memory", "4K", "--checkpoint", "0", "--axes", "3,2,1,0", "in.h5", "out.h5"]
        for move in (0, 1):
            with self.subTest(stopped_in_move=move + 1):
                proc = start(2, [XPOSE, *args], cwd=self.dir)
                partial = self.path("out.h5.xpose-partial")
                record = wait_for_record(proc, partial, lambda r: r["move"].startswith(f"{move} ")
                                         and int(r["passes_done"]) >= 20, timeout=120, poll=0.02)
                self.assertIsNotNone(record, "the run ended before its stop")
                if move == 0:
                    self.assertEqual(record["lead_order"], "2 1 0")
                os.kill(proc.pid, signal.SIGUSR1)
                result = finish(proc)
                self.assertEqual(result.returncode, 4, result)
                self.assertIn(f"passes of move {move + 1} of 2", result.stderr)
                result = self.xpose(3, "--resume", "--memory", "8K", "--axes", "3,2,1,0",
                                    "in.h5", "out.h5")
                self.assertEqual(result.returncode, 0, result)
                self.assertIn("(resumed)", result.stdout)
                self.assertPermuted(data, [3, 2, 1, 0])
                self.assertEqual(self.leftovers(), [])
                os.remove(self.path("out.h5"))

    def test_dims_by_label_and_by_netcdf_dimension(self):
        data = pattern((6, 5, 4), "<f4")
        with h5py.File(self.path("in.h5"), "w") as f:
            v = f.create_dataset("v", data=data)
            for axis, label in enumerate(("time", "lat", "lon")):
                v.dims[axis].label = label
        result = self.xpose(2, "--memory", "1K", "--dims", "lat,lon,time", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("time x lat x lon (6 x 5 x 4)", result.stdout)
        self.assertIn("lat x lon x time (5 x 4 x 6)", result.stdout)
        self.assertPermuted(data, [1, 2, 0])
        with h5py.File(self.path("out.h5"), "r") as f:
            self.assertEqual([d.label for d in f["v"].dims], ["lat", "lon", "time"])
        # ncpdq's rule: lon and lat swap places, time stays in front
        result = self.xpose(2, "--force", "--memory", "1K", "--dims", "lon,lat", "in.h5",
                            "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("time x lon x lat (6 x 4 x 5)", result.stdout)
        self.assertPermuted(data, [0, 2, 1])
        result = self.xpose(2, "--force", "--dims", "lat,depth,time", "in.h5", "out.h5")
        self.assertEqual(result.returncode, USAGE, result)
        self.assertIn("no dataset of in.h5 has an axis named 'depth' (its axes: time,lat,lon)",
                      result.stderr)
        try:
            import netCDF4
        except ImportError:
            return
        with netCDF4.Dataset(self.path("in.nc"), "w") as nc:
            nc.createDimension("time", None)
            nc.createDimension("lat", 5)
            nc.createDimension("lon", 4)
            nc.createVariable("lat", "f4", ("lat",))[:] = np.arange(5)
            v = nc.createVariable("v", "f4", ("time", "lat", "lon"))
            v.units = "K"
            v[:] = data
        result = self.xpose(3, "--memory", "1K", "--dims", "lat,lon,time", "in.nc:/v", "out.nc")
        self.assertEqual(result.returncode, 0, result)
        with netCDF4.Dataset(self.path("out.nc")) as nc:
            self.assertEqual(nc["v"].dimensions, ("lat", "lon", "time"))
            self.assertEqual(nc["v"].units, "K")
            np.testing.assert_array_equal(nc["v"][:], data.transpose(1, 2, 0))
            np.testing.assert_array_equal(nc["lat"][:], np.arange(5))

    def test_verify_finds_the_order_or_asks_for_it(self):
        data = self.write((6, 5, 4), "<i2")
        result = self.xpose(2, "--axes", "2,0,1", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        result = self.xpose(2, "verify", "in.h5", "out.h5")  # only 2,0,1 gives 4 x 6 x 5
        self.assertEqual(result.returncode, 0, result)
        result = self.xpose(2, "verify", "--axes", "1,2,0", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 3, result)  # another shape: not that transpose
        self.write((4, 4, 4), "<i2", name="cube.h5")
        result = self.xpose(2, "--axes", "1,2,0", "cube.h5", "cube-out.h5")
        self.assertEqual(result.returncode, 0, result)
        result = self.xpose(2, "verify", "cube.h5", "cube-out.h5")
        self.assertEqual(result.returncode, USAGE, result)
        self.assertIn("more than one way: name the order with --dims or --axes", result.stderr)
        result = self.xpose(2, "verify", "--axes", "2,0,1", "cube.h5", "cube-out.h5")
        self.assertEqual(result.returncode, 3, result)  # same shape, other order: caught
        result = self.xpose(2, "verify", "--axes", "1,2,0", "cube.h5", "cube-out.h5")
        self.assertEqual(result.returncode, 0, result)
        del data

    def test_a_stopped_n_d_run_resumes_only_for_its_own_order(self):
        # 15 MiB in passes of 4 KiB: thousands, so the stop lands mid-run even
        # where passes take a millisecond (a GPU machine) and mpirun forwards late.
        data = self.write((240, 136, 120), "<f4")
        # (order, its fold in the record, another order of the same shape's axes)
        for order, fold, other in (("1,2,0", "3 0 1 3", "2,0,1"),
                                   ("0,2,1", "3 1 2 3", "1,0,2")):
            with self.subTest(order=order):
                args = ["--memory", "4K", "--checkpoint", "0", "--axes", order, "in.h5",
                        "out.h5"]
                if os.path.exists(self.path("out.h5")):  # the order before's
                    os.remove(self.path("out.h5"))
                proc = start(2, [XPOSE, *args], cwd=self.dir)
                partial = self.path("out.h5.xpose-partial")
                wait_for_record(proc, partial, lambda r: int(r["passes_done"]) >= 20, poll=0.02)
                os.kill(proc.pid, signal.SIGUSR1)
                result = finish(proc)
                self.assertEqual(result.returncode, 4, result)
                self.assertEqual(resume_record(partial)["fold"], fold + " 240 136 120")
                result = self.xpose(2, "--resume", "--memory", "4K", "--axes", other, "in.h5",
                                    "out.h5")
                self.assertEqual(result.returncode, 1, result)
                self.assertIn("it was started for another order of the axes", result.stderr)
                result = self.xpose(2, "--resume", *args)
                self.assertEqual(result.returncode, 0, result)
                self.assertIn("(resumed)", result.stdout)
                self.assertPermuted(data, [int(axis) for axis in order.split(",")])
                self.assertEqual(self.leftovers(), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
