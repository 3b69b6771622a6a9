"""End to end: a run stopped by a signal or killed keeps a resumable
partial output and never an output under the final name; --resume
finishes it (checked by h5py against numpy); partials are never mixed up
or silently dropped; one run at a time writes an output, and publishing
never replaces a file that appeared meanwhile."""

import os
import signal
import subprocess
import time
import unittest

import numpy as np

from harness import (XPOSE, XPOSE_GEN, ToolTestCase, finish, holds_stops_back, pattern,
                     resume_record, start, wait_for_record, with_environment)

STOPPED, ERROR = 4, 1


def read_text(path):
    with open(path) as f:
        return f.read()


WRITE_FAULT = os.environ.get("XPOSE_WRITE_FAULT", "")
# Thousands of tiny passes (seconds of work) with a checkpoint after each.
SLOW = ["--memory", "8K", "--checkpoint", "0"]


class Resume(ToolTestCase):
    def setUp(self):
        super().setUp()
        self.a = pattern((1200, 1100), "<f8")
        self.write_h5("in.h5", {"/m": self.a})
        self.partial = self.path("out.h5.xpose-partial")

    def start(self, ranks=3, *extra, env=None):
        return start(ranks, [XPOSE, *SLOW, *extra, "in.h5", "out.h5"], cwd=self.dir, env=env)

    def wait_for_passes(self, proc, passes=50, timeout=60):
        record = wait_for_record(proc, self.partial, lambda r: int(r["passes_done"]) >= passes,
                                 timeout, poll=0.02)
        if record is None:
            self.fail(f"the run never got {passes} passes done\n{finish(proc)}")
        return int(record["passes_done"])

    def assertResumable(self, result):
        self.assertNotEqual(result.returncode, 0, result)
        self.assertFalse(os.path.exists(self.path("out.h5")), f"an output was published\n{result}")
        record = resume_record(self.partial)
        self.assertIsNotNone(record, f"no resumable partial\n{result}")
        self.assertGreater(int(record["passes_done"]), 0)
        return int(record["passes_done"])

    def resume_and_check(self, ranks=2, *extra):
        result = self.xpose(ranks, "--resume", *extra, "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("resuming from out.h5.xpose-partial", result.stderr)
        self.assertIn("(resumed)", result.stdout)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        self.assertEqual(self.leftovers(), [])

    def test_stop_signals_then_resume(self):
        # USR1 (a batch system's warning) and double signals from a terminal
        # or `timeout`; mpirun forwards them all.
        for signals in ([signal.SIGUSR1], [signal.SIGINT, signal.SIGINT],
                        [signal.SIGTERM, signal.SIGTERM], [signal.SIGHUP]):
            with self.subTest(signals=signals):
                proc = self.start()
                self.wait_for_passes(proc)
                for s in signals:
                    os.kill(proc.pid, s)
                    time.sleep(0.05)
                result = finish(proc)
                done = self.assertResumable(result)
                if signals == [signal.SIGUSR1]:  # mpirun lets the ranks finish on their own
                    self.assertEqual(result.returncode, STOPPED, result)
                    self.assertEqual(result.stderr.count("xpose: error: stopped by SIGUSR1 after "
                                                         f"{done} of "), 1, result)
                    self.assertIn("run the same command with --resume to continue", result.stderr)
                self.resume_and_check()
                os.remove(self.path("out.h5"))

    def test_a_stop_while_mpi_starts_stops_the_run_cleanly(self):
        # Slurm's warning may come before the ranks can handle it: held
        # until they can, it stops the run like any other (exit 4), never
        # ends a rank at once.
        proc = self.start(2)
        ranks, deadline = set(), time.monotonic() + 30
        while len(ranks) < 2 and proc.poll() is None and time.monotonic() < deadline:
            for pid in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                      text=True).stdout.split():
                if pid not in ranks and holds_stops_back(pid):
                    os.kill(int(pid), signal.SIGUSR1)
                    ranks.add(pid)
        result = finish(proc)
        self.assertEqual(len(ranks), 2, f"never saw both ranks starting\n{result}")
        self.assertEqual(result.returncode, STOPPED, result)
        self.assertIn("xpose: error: stopped by SIGUSR1", result.stderr)
        result = self.xpose(2, "--resume", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")

    def test_ranks_are_named_after_the_program(self):
        # Users and scripts find and signal ranks by name (ps, pgrep -x,
        # pkill, killall), though each restarts itself for its heap.
        proc = self.start(2)
        self.wait_for_passes(proc)
        ranks = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                               text=True).stdout.split()
        names = [read_text(f"/proc/{pid}/comm").strip() for pid in ranks]
        # -P: only this run's ranks, not other xpose runs on the machine.
        signalled = subprocess.run(["pkill", "-USR1", "-x", "-P", str(proc.pid), "xpose"])
        result = finish(proc)
        self.assertEqual(names, ["xpose", "xpose"], result)
        self.assertEqual(signalled.returncode, 0, result)
        self.assertEqual(result.returncode, STOPPED, result)
        self.assertResumable(result)
        self.resume_and_check()

    def test_generator_ranks_are_named_after_it(self):
        proc = start(2, [XPOSE_GEN, "--memory", "64K", "4000", "4000", "gen.h5"], cwd=self.dir)
        last, seen = {}, set()  # each rank's name as last read; every name read
        while proc.poll() is None and list(last.values()).count("xpose-gen") < 2:
            for pid in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                      text=True).stdout.split():
                try:
                    last[pid] = read_text(f"/proc/{pid}/comm").strip()
                except FileNotFoundError:  # ended meanwhile
                    continue
                seen.add(last[pid])
            time.sleep(0.01)
        result = finish(proc)
        self.assertEqual(result.returncode, 0, result)
        # (before that, mpiexec's name: its forked child not yet the program)
        self.assertEqual(list(last.values()), ["xpose-gen", "xpose-gen"], seen)
        self.assertNotIn("exe", seen)

    def test_kill_9_of_a_rank_or_of_mpirun_then_resume(self):
        for victim in ("rank", "mpirun"):
            with self.subTest(victim=victim):
                proc = self.start()
                self.wait_for_passes(proc)
                if victim == "rank":
                    ranks = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                           text=True).stdout.split()
                    self.assertTrue(ranks, "no rank processes found")
                    os.kill(int(ranks[-1]), signal.SIGKILL)
                    result = finish(proc)
                else:
                    os.kill(proc.pid, signal.SIGKILL)
                    result = finish(proc)
                    # Orphaned ranks notice and end; wait for the session to empty.
                    deadline = time.time() + 60
                    while time.time() < deadline and subprocess.run(
                            ["pgrep", "-s", str(proc.pid)], capture_output=True).returncode == 0:
                        time.sleep(0.1)
                    subprocess.run(["pkill", "-9", "-s", str(proc.pid)])
                self.assertResumable(result)
                self.resume_and_check(ranks=3)
                os.remove(self.path("out.h5"))

    def test_raw_passes_killed_between_background_syncs_resume(self):
        # Raw passes (contiguous, shares of 1 MiB and more) sync the output
        # beside the next passes and record them once synced; slowed writes
        # make many such checkpoints.  A kill among them loses none of what
        # was recorded.
        if not WRITE_FAULT:
            self.skipTest("the write fault shim was not built")
        self.a = pattern((4096, 2048), "<f8")
        self.write_h5("in.h5", {"/m": self.a})
        env = {"LD_PRELOAD": WRITE_FAULT, "WRITE_FAULT_PATH": "out.h5.xpose-partial",
               "WRITE_FAULT_DELAY_US": "200"}
        args = ["--memory", "16M", "--checkpoint", "0", "--verbose", "in.h5", "out.h5"]
        proc = start(2, [XPOSE, *args], cwd=self.dir, env=with_environment(env))
        record = wait_for_record(proc, self.partial, lambda r: int(r["passes_done"]) >= 6,
                                 timeout=60, poll=0.02)
        ranks = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                               text=True).stdout.split()
        if record is None or not ranks:
            self.fail(f"the run never got 6 passes recorded\n{finish(proc)}")
        os.kill(int(ranks[-1]), signal.SIGKILL)
        done = self.assertResumable(finish(proc))
        self.assertGreaterEqual(done, 6)
        result = self.xpose(2, "--resume", "--verbose", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("raw I/O", result.stderr)  # the path under test
        self.assertIn(f"resuming from out.h5.xpose-partial: {done} of ", result.stderr)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        self.assertEqual(self.leftovers(), [])

    def stopped_partial(self):
        proc = self.start()
        self.wait_for_passes(proc)
        os.kill(proc.pid, signal.SIGUSR1)
        return self.assertResumable(finish(proc))

    def test_partial_needs_resume_or_force(self):
        self.stopped_partial()
        result = self.xpose(2, "in.h5", "out.h5")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertEqual(result.stderr.count(
            "out.h5.xpose-partial is left from an interrupted run: add --resume to continue it, "
            "or --force to start over"), 1, result)
        self.assertIsNotNone(resume_record(self.partial), "the partial was touched")
        result = self.xpose(2, "--force", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertNotIn("(resumed)", result.stdout)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        self.assertEqual(self.leftovers(), [])

    def test_the_record_lives_beside_the_partial(self):
        # The partial is a plain HDF5 file from its first byte (no user
        # block), so what was published is too; the record is a text file.
        self.stopped_partial()
        with open(self.partial, "rb") as f:
            self.assertEqual(f.read(8), b"\x89HDF\r\n\x1a\n")
        record = self.path("out.h5.xpose-resume")
        with open(record, "rb") as f:
            self.assertIn(b"xpose partial output, resume record 7\n", f.read())
        # A partial whose record is gone cannot be resumed, and says why.
        os.rename(record, record + ".saved")
        result = self.xpose(2, "--resume", "in.h5", "out.h5")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("cannot resume from out.h5.xpose-partial: out.h5.xpose-resume holds no "
                      "intact resume record", result.stderr)
        self.assertTrue(os.path.exists(self.partial), "a refused partial was removed")
        os.rename(record + ".saved", record)
        self.resume_and_check()
        with open(self.path("out.h5"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89HDF\r\n\x1a\n", "the output has a user block")

    def test_a_record_with_no_partial_is_removed(self):
        self.stopped_partial()
        os.remove(self.partial)  # by hand: the record now describes nothing
        result = self.xpose(2, "--resume", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertNotIn("(resumed)", result.stdout)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        self.assertEqual(self.leftovers(), [])

    def test_resume_refuses_another_input_or_too_small_a_budget(self):
        self.stopped_partial()
        result = self.xpose(2, "--resume", "--memory", "1K", "in.h5", "out.h5")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("cannot resume from out.h5.xpose-partial: its passes need", result.stderr)
        st = os.stat(self.path("in.h5"))
        os.utime(self.path("in.h5"), ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
        result = self.xpose(2, "--resume", "in.h5", "out.h5")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertEqual(result.stderr.count(
            "cannot resume from out.h5.xpose-partial: the input file changed since it was "
            "started: it was modified"), 1, result)
        self.write_h5("other.h5", {"/m": self.a})
        result = self.xpose(2, "--resume", "other.h5", "out.h5")
        self.assertIn("it was started from another input file", result.stderr)
        self.assertIsNotNone(resume_record(self.partial), "a refused partial was removed")
        self.assertFalse(os.path.exists(self.path("out.h5")))
        # With --force too: start over, and say so.
        result = self.xpose(2, "--resume", "--force", "other.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(result.stderr.count("note: starting over: out.h5.xpose-partial could not "
                                             "be resumed: it was started from another input"), 1,
                         result)
        self.assertTransposed("other.h5", "/m", "out.h5", "/m")
        self.assertEqual(self.leftovers(), [])

    def test_resume_without_a_partial_starts_afresh(self):
        result = self.xpose(2, "--resume", "in.h5", "out.h5")
        self.assertEqual(result.returncode, 0, result)
        self.assertNotIn("resum", result.stderr + result.stdout)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")

    def test_one_run_at_a_time_per_output(self):
        first = self.start(2)
        self.wait_for_passes(first, passes=5)
        second = self.xpose(2, "--force", "in.h5", "out.h5")
        self.assertEqual(second.returncode, ERROR, second)
        self.assertRegex(second.stderr,
                         r"another xpose run \(pid \d+ on .*\) is writing out.h5 \(it holds "
                         r"out.h5.xpose-lock\); wait for it to end")
        result = finish(first)
        self.assertEqual(result.returncode, 0, result)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        self.assertEqual(self.leftovers(), [])

    def test_publishing_never_replaces_a_file_that_appeared(self):
        proc = self.start(2)
        self.wait_for_passes(proc, passes=5)
        with open(self.path("out.h5"), "w") as f:
            f.write("someone else's file\n")
        result = finish(proc)
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("out.h5 appeared while xpose was writing it, and is left alone", result.stderr)
        with open(self.path("out.h5")) as f:
            self.assertEqual(f.read(), "someone else's file\n")
        self.assertTrue(os.path.exists(self.partial), "the verified transpose was not kept")


class LongNames(ToolTestCase):
    def test_output_names_up_to_name_max(self):
        a = pattern((40, 30), "<i4")
        self.write_h5("in.h5", {"/m": a})
        for length in (220, 255):
            name = "o" * (length - 3) + ".h5"
            result = self.xpose(2, "--memory", "2K", "in.h5", name)
            self.assertEqual(result.returncode, 0, result)
            self.assertTransposed("in.h5", "/m", name, "/m")
            self.assertEqual(self.leftovers(), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
