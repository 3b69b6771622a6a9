"""End to end: datasets many times larger than the memory budget are
transposed in passes (full rows, full columns and square blocks),
pipelined or one after the other, the
generator and --verify agree, small message limits work through the tool,
`xpose verify` catches wrong outputs, --json prints one object, and
--mpi-hint reaches both MPI-IO layers."""

import json
import os
import re
import unittest

import h5py
import numpy as np

from harness import XPOSE, XPOSE_GEN, ToolTestCase, finish, mpirun, pattern, start


class Passes(ToolTestCase):
    def transpose_in_passes(self, shape, dtype, ranks, memory, min_passes):
        data = pattern(shape, dtype)
        self.write_h5("in.h5", {"/m": data})
        result = self.xpose(ranks, "--memory", memory, "--verify", "-v", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        plan = re.search(r"(\d+) pass\(es\): .* blocks up to (\d+) x (\d+)", result.stderr)
        self.assertIsNotNone(plan, result)
        passes, block_rows, block_cols = map(int, plan.groups())
        self.assertGreaterEqual(passes, min_passes, result)
        return block_rows, block_cols

    def test_square_blocks_budget_64_times_smaller(self):
        # 8 MB of float64 with 64 KiB per rank on 2 ranks: 128 KiB in all.
        rows, cols = self.transpose_in_passes((1009, 997), "<f8", 2, "64K", 64)
        self.assertLess(abs(rows - cols), 2, "neither dimension fits: blocks should be square")

    def test_very_wide_matrix_whole_columns(self):
        # Whole columns: every pass writes one contiguous range of the output.
        self.assertEqual(self.transpose_in_passes((7, 60013), "<i4", 3, "32K", 20)[0], 7)

    def test_very_tall_matrix_whole_rows(self):
        # Whole rows: every pass reads one contiguous range of the input.
        self.assertEqual(self.transpose_in_passes((60013, 7), ">c8", 4, "32K", 20)[1], 7)

    def test_pipelined_and_one_after_the_other_agree(self):
        # The I/O thread reads and writes while passes are transposed; with
        # XPOSE_IO_THREAD=0 the same passes run one step at a time.  Blocks
        # of a few MiB per rank: smaller ones get no thread.
        self.write_h5("in.h5", {"/m": pattern((3001, 2003), "<f4")})
        outputs = {}
        for io_thread in ("1", "0"):
            out = f"out{io_thread}.h5"
            env = dict(os.environ, XPOSE_IO_THREAD=io_thread)
            result = finish(start(3, [XPOSE, "--memory", "12M", "-v", "in.h5", out],
                                  cwd=self.dir, env=env))
            self.assertEqual(result.returncode, 0, result)
            self.assertIn("I/O thread" if io_thread == "1" else "one after the other",
                          result.stderr)
            self.assertGreaterEqual(int(re.search(r"(\d+) pass\(es\):", result.stderr)[1]), 4)
            self.assertTransposed("in.h5", "/m", out, "/m")
            outputs[io_thread] = self.read_h5(out, "/m")[0]
        np.testing.assert_array_equal(outputs["1"], outputs["0"])

    def test_odd_element_size_in_passes(self):
        self.transpose_in_passes((333, 211), "S12", 3, "16K", 30)

    def test_generator_round_trip_and_twice_is_identity(self):
        for dtype in ("f32", "c128", "s9", "o3", "u16"):
            with self.subTest(dtype=dtype):
                gen = mpirun(3, [XPOSE_GEN, "--force", "--type", dtype, "--big-endian", 211, 97,
                                 self.path("g.h5")])
                self.assertEqual(gen.returncode, 0, gen)
                one = self.xpose(2, "--force", "--verify", "--memory", "20K", "g.h5", "t.h5")
                self.assertEqual(one.returncode, 0, one)
                two = self.xpose(4, "--force", "--verify", "t.h5", "tt.h5")
                self.assertEqual(two.returncode, 0, two)
                a, a_type, _ = self.read_h5("g.h5", "/matrix")
                b, b_type, _ = self.read_h5("tt.h5", "/matrix")
                self.assertEqual(a_type, b_type)
                self.assertTrue(np.array_equal(a, b), "transposing twice changed the data")

    def test_generator_is_deterministic_across_rank_counts(self):
        for ranks in (1, 4):
            gen = mpirun(ranks, [XPOSE_GEN, "--type", "i32", "--memory", "8K", 53, 41,
                                 self.path(f"g{ranks}.h5")])
            self.assertEqual(gen.returncode, 0, gen)
        a, _, _ = self.read_h5("g1.h5", "/matrix")
        b, _, _ = self.read_h5("g4.h5", "/matrix")
        self.assertTrue(np.array_equal(a, b))
        self.assertGreater(np.count_nonzero(a), a.size * 0.99, "generator wrote zeros")

    def test_tiny_message_limit_through_the_tool(self):
        self.write_h5("in.h5", {"/m": pattern((131, 67), "<f8")})
        result = self.xpose(3, "--max-message", "100", "--verify", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")


class VerifyCatchesErrors(ToolTestCase):
    """`xpose verify` (the checksum the default read-back and --verify use)
    against outputs known to be wrong, with its exit status 0 / 3."""

    def verdict(self, out):
        with h5py.File(self.path("out.h5"), "w") as f:
            f["/m"] = out
        result = mpirun(2, [XPOSE, "verify", self.path("in.h5"), self.path("out.h5")])
        self.assertIn(result.returncode, (0, 3), result)
        self.assertEqual(result.stdout.count(" is the transpose of "), result.returncode == 0)
        self.assertEqual(result.stderr.count(" is not the transpose of "), result.returncode == 3)
        return result.returncode == 0

    def test_verdicts(self):
        a = pattern((29, 17), "<i8")
        self.write_h5("in.h5", {"/m": a})
        self.assertTrue(self.verdict(a.T.copy()))
        changed = a.T.copy()
        changed[3, 5] += 1
        self.assertFalse(self.verdict(changed))
        swapped = a.T.copy()
        swapped[[0, 1], 2] = swapped[[1, 0], 2]
        self.assertFalse(self.verdict(swapped))
        self.assertFalse(self.verdict(a.reshape(17, 29)))  # right shape, wrong layout
        self.assertFalse(self.verdict(a.T.astype(">i8")))  # right values, other datatype
        zeroed = a.T.copy()
        zeroed[16, 28] = 0
        self.assertFalse(self.verdict(zeroed))


class Json(ToolTestCase):
    def test_summaries_are_one_json_object(self):
        self.write_h5("in.h5", {"/m": pattern((40, 31), "<f4")})
        result = self.xpose(2, "--json", "--memory", "4K", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        summary = json.loads(result.stdout)
        self.assertEqual((summary["status"], summary["exit_code"], summary["rows"],
                          summary["cols"], summary["ranks"], summary["verification"]),
                         ("ok", 0, 40, 31, 2, "verified"), summary)
        self.assertGreater(summary["passes"], 1)
        check = json.loads(self.xpose(3, "verify", "--json", "in.h5", "out.h5").stdout)
        self.assertEqual((check["status"], check["exit_code"]), ("transpose", 0), check)
        failed = self.xpose(2, "--json", "in.h5", "out.h5")
        self.assertEqual(failed.returncode, 1, failed)
        error = json.loads(failed.stdout)
        self.assertEqual(error["status"], "error")
        self.assertIn("exists; use --force", error["message"])


class MpiHints(ToolTestCase):
    def test_hints_reach_both_mpi_io_layers(self):
        self.write_h5("in.h5", {"/m": pattern((50, 70), "<f8")})
        for io in ("romio321", "ompio"):
            with self.subTest(io=io):
                os.environ["OMPI_MCA_io"] = io
                try:
                    result = self.xpose(2, "-v", "--force", "--memory", "8K", "--mpi-hint",
                                        "cb_buffer_size=1048576", "--mpi-hint",
                                        "romio_cb_write=enable", "in.h5", "out.h5")
                finally:
                    del os.environ["OMPI_MCA_io"]
                self.assertEqual(result.returncode, 0, result)
                self.assertRegex(result.stderr, r"MPI-IO hints in force on out.h5: .*"
                                                r"cb_buffer_size=1048576")
                self.assertTransposed("in.h5", "/m", "out.h5", "/m")


class TinyBudgets(ToolTestCase):
    def test_a_budget_of_too_many_passes_is_raised_with_a_note(self):
        # 800 x 800 float64 on 2 ranks in 1 KiB: some 20,000 passes of
        # nothing but synchronisation; raised to about 10,000 at most.
        self.write_h5("in.h5", {"/m": pattern((800, 800), "<f8")})
        result = self.xpose(2, "--memory", "1K", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(result.stderr.count("xpose: note: --memory 1.00 KiB would take more than "
                                             "10000 passes to move in.h5:/m: raised to "), 1, result)
        passes = int(re.search(r"(\d+) pass\(es\)", result.stdout).group(1))
        self.assertLessEqual(passes, 12000, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")


class Progress(ToolTestCase):
    def test_progress_lines(self):
        # XPOSE_PROGRESS_DELAY=0: progress from the first pass, whatever the speed.
        self.write_h5("in.h5", {"/m": pattern((400, 400), "<f8")})
        os.environ["XPOSE_PROGRESS_DELAY"] = "0"
        try:
            result = self.xpose(2, "--memory", "16K", "in.h5", "out.h5")
            quiet = self.xpose(2, "--force", "--quiet", "--memory", "16K", "in.h5", "out.h5")
        finally:
            del os.environ["XPOSE_PROGRESS_DELAY"]
        self.assertEqual(result.returncode, 0, result)
        lines = [l for l in result.stderr.splitlines() if l.startswith("xpose: pass ")]
        self.assertGreaterEqual(len(lines), 2, result)
        self.assertRegex(lines[0], r"^xpose: pass 1/\d+, +\d+% \(.* of 1.22 MiB\), [\d.]+ [GM]B/s, \d+ s left$")
        self.assertRegex(lines[-1], r"100% \(1.22 MiB of 1.22 MiB\)")
        self.assertEqual((quiet.returncode, quiet.stdout, quiet.stderr), (0, "", ""), quiet)

    def test_progress_and_summary_name_each_dataset_and_move(self):
        with h5py.File(self.path("in.h5"), "w") as f:
            for name in ("a", "b"):
                d = f.create_dataset(name, data=pattern((40, 30, 20), "<f4"))
                for i, label in enumerate("tyx"):
                    d.dims[i].label = label
            f.create_dataset("c", data=pattern((6, 5, 4, 3), "<f4"))
        now = {"XPOSE_PROGRESS_DELAY": "0"}
        result = self.xpose(2, "--json", "--memory", "16K", "--dims", "y,x,t", "in.h5", "out.h5",
                            env=now)
        self.assertEqual(result.returncode, 0, result)
        for which in ("/a (1 of 2)", "/b (2 of 2)"):
            self.assertRegex(result.stderr, rf"(?m)^xpose: {re.escape(which)}: pass 1/\d+, ")
        summary = json.loads(result.stdout)
        self.assertEqual(summary["datasets"], 2)
        self.assertEqual([(d["input_dataset"], d["output_dataset"], d["input_shape"],
                           d["output_shape"]) for d in summary["rearranged"]],
                         [(n, n, "t x y x x (40 x 30 x 20)", "y x x x t (30 x 20 x 40)")
                          for n in ("/a", "/b")])
        result = self.xpose(2, "--force", "--dims", "y,x,t", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertRegex(result.stdout, r"(?m)^xpose:   /a: t x y x x \(40 x 30 x 20\) -> "
                                        r"y x x x t \(30 x 20 x 40\), [\d.]+ s$")
        self.assertRegex(result.stdout, r"(?m)^xpose:   /b: ")
        result = self.xpose(2, "--memory", "4K", "in.h5:/c", "c.h5", env=now)  # reversed: 2 moves
        self.assertEqual(result.returncode, 0, result)
        for move in (1, 2):
            self.assertRegex(result.stderr, rf"(?m)^xpose: move {move} of 2: pass 1/\d+, ")


if __name__ == "__main__":
    unittest.main(verbosity=2)
