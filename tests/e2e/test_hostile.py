"""End to end, as a hostile but realistic user: compressed outputs killed
and resumed, inputs that are xpose's own files, change during a run or
between a stop and a resume, stop signals sent to mpirun, to its process
group and to one rank at random points of the passes and of the final
verification, reruns of finished jobs, and --json in every outcome.

Every run is held to the promise: exit 0 and the exact transpose under the
output's name, or a non-zero exit and no file there (mpirun signalled
itself is the one exception the user's guide names: it exits 1 whatever its
ranks did, so there the output may be published; it is then exact and a
rerun says "already done").  The input is never modified."""

import json
import os
import random
import signal
import subprocess
import time
import unittest

import h5py
import numpy as np

from harness import (XPOSE, ToolTestCase, digest, finish, pattern, ranks_of, resume_record,
                     set_end_of_allocation, start, wait_for_record, wait_for_session_end,
                     with_environment)

OK, ERROR, USAGE, VERIFY, STOPPED = 0, 1, 2, 3, 4
SEED = int(os.environ.get("XPOSE_TEST_SEED", "22"))
# Tiny passes with a checkpoint after each: seconds of work, many stop points.
SLOW = ["--memory", "8K", "--checkpoint", "0"]
# mpirun's default: SIGKILL a second after the SIGTERM it sends (the suite
# sets 0 elsewhere, to tear failed jobs down fast).
MPIRUN_DEFAULTS = {"OMPI_MCA_odls_base_sigkill_timeout": "1"}


class Hostile(ToolTestCase):
    def setUp(self):
        super().setUp()
        self.rng = random.Random(SEED)
        self.out = self.path("out.h5")
        self.partial = self.path("out.h5.xpose-partial")

    def wait_for(self, proc, predicate, timeout=60):
        return wait_for_record(proc, self.partial, predicate, timeout, poll=0.005)

    def wait_for_passes(self, proc, passes):
        record = self.wait_for(proc, lambda r: int(r["passes_done"]) >= passes)
        if record is None:
            self.fail(f"the run never got {passes} passes done\n{finish(proc)}")

    def assertPromise(self, result, in_name="in.h5", mpirun_signalled=False):
        """Exit 0 and the exact transpose, or non-zero and nothing under
        the output's name; returns whether an output was published."""
        if result.returncode == OK or (mpirun_signalled and os.path.exists(self.out)):
            self.assertTransposed(in_name, "/m", "out.h5", "/m")
            self.assertFalse(os.path.exists(self.partial), f"a published run kept its partial\n{result}")
            return True
        self.assertFalse(os.path.exists(self.out), f"a failed run published\n{result}")
        return False

    def finish_with_resume(self, ranks=2, in_name="in.h5", *extra):
        result = self.xpose(ranks, "--resume", *extra, in_name, "out.h5")
        self.assertEqual(result.returncode, OK, result)
        self.assertTransposed(in_name, "/m", "out.h5", "/m")
        self.assertEqual(self.leftovers(), [])
        return result


class CompressedResume(Hostile):
    """A killed compressed output resumes to the exact transpose, whatever
    the rank count and MPI-IO layer; one whose passes cut its chunks (a
    budget too small for whole chunks) starts over, and says why."""

    def kill_and_resume(self, ranks, io, memory, victim):
        env = with_environment({"OMPI_MCA_io": io})
        proc = start(ranks, [XPOSE, "--memory", memory, "--checkpoint", "0", "--layout",
                             "chunked=53x47", "--filter", "gzip=1", "in.h5", "out.h5"],
                     cwd=self.dir, env=env)
        self.wait_for_passes(proc, self.rng.randint(3, 20))
        if victim == "ranks":
            for pid in ranks_of(proc):
                os.kill(pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGUSR1)
        result = finish(proc)
        wait_for_session_end(proc)
        self.assertPromise(result)
        if os.path.exists(self.out):  # finished before the kill
            os.remove(self.out)
            return None
        resumed = self.xpose(ranks, "--resume", "--no-verify", "--memory", memory, "in.h5",
                             "out.h5", env={"OMPI_MCA_io": io})
        self.assertEqual(resumed.returncode, OK, resumed)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")
        self.assertEqual(self.leftovers(), [])
        os.remove(self.out)
        return resumed

    def test_killed_compressed_output_resumes_exactly(self):
        self.write_h5("in.h5", {"/m": pattern((400, 371), "<f8")})
        before = digest(self.path("in.h5"))
        for io in ("ompio", "romio321"):
            for ranks in (1, 2, 3, 4):
                victim = "ranks" if ranks % 2 else "mpirun"
                with self.subTest(io=io, ranks=ranks, victim=victim):
                    resumed = self.kill_and_resume(ranks, io, "200K", victim)
                    if resumed is not None:
                        self.assertIn("note: resuming from out.h5.xpose-partial", resumed.stderr)
                        self.assertIn("(resumed)", resumed.stdout)
        self.assertEqual(digest(self.path("in.h5")), before)

    def test_chunks_past_the_recorded_end_of_allocation_are_rewritten(self):
        # What a kill can leave (2 of 750 resumes in a kill-and-resume loop
        # failed on it): a chunk index, written out by HDF5's metadata cache
        # after the last checkpoint, that lists a chunk past the end of
        # allocation the superblock holds.  Made here by hand: in a stopped
        # partial, a chunk of a pass not yet done (still its fill value: the
        # chunks are allocated when the dataset is made) replaced by what the
        # run will write there, which HDF5 puts at the file's end, and the
        # superblock's end set back to that chunk's start.
        self.write_h5("in.h5", {"/m": pattern((400, 371), "<f8")})
        layout = ["--layout", "chunked=53x47", "--filter", "gzip=1", "--memory", "200K"]
        whole = self.xpose(2, *layout, "in.h5", "whole.h5")  # each chunk as the run writes it
        self.assertEqual(whole.returncode, OK, whole)
        proc = start(2, [XPOSE, *layout, "--checkpoint", "0", "in.h5", "out.h5"], cwd=self.dir)
        self.wait_for_passes(proc, 3)
        os.kill(proc.pid, signal.SIGUSR1)
        self.assertEqual(finish(proc).returncode, STOPPED)

        with h5py.File(self.path("whole.h5"), "r") as done, h5py.File(self.partial, "r+") as part:
            offsets = [done["m"].id.get_chunk_info(i).chunk_offset
                       for i in range(done["m"].id.get_num_chunks())]
            final = {o: done["m"].id.read_direct_chunk(o)[1] for o in offsets}
            offset = next(o for o in offsets if part["m"].id.read_direct_chunk(o)[1] != final[o])
            part["m"].id.write_direct_chunk(offset, final[offset])
        with h5py.File(self.partial, "r") as part:
            start_of_chunk = part["m"].id.get_chunk_info_by_coord(offset).byte_offset
        set_end_of_allocation(self.partial, start_of_chunk)
        os.remove(self.path("whole.h5"))
        self.finish_with_resume(2, "in.h5")

    def test_passes_that_cut_compressed_chunks_start_over(self):
        self.write_h5("in.h5", {"/m": pattern((400, 371), "<f8")})
        resumed = self.kill_and_resume(2, "ompio", "20K", "ranks")
        self.assertIsNotNone(resumed, "the run finished before it was killed")
        self.assertRegex(resumed.stderr, r"warning: starting over: the \d+ passes recorded in "
                         r"out.h5.xpose-partial are redone: they cut its compressed chunks "
                         r"\(53 x 47\), which a new run cannot rewrite")

    def test_a_partial_that_reads_back_wrong_is_redone(self):
        self.write_h5("in.h5", {"/m": pattern((400, 371), "<f8")})
        proc = start(2, [XPOSE, *SLOW, "--layout", "contiguous", "in.h5", "out.h5"], cwd=self.dir)
        self.wait_for_passes(proc, 50)
        os.kill(proc.pid, signal.SIGUSR1)
        self.assertEqual(finish(proc).returncode, STOPPED)
        with h5py.File(self.partial, "r+") as f:  # what a lost write leaves
            f["/m"][0, 0] = 0
        result = self.finish_with_resume(2, "in.h5", "--no-verify")
        self.assertRegex(result.stderr, r"warning: starting over: the \d+ passes recorded in "
                         r"out.h5.xpose-partial are redone: they read back with checksum "
                         r"[0-9a-f]{16}, not the recorded [0-9a-f]{16}")

    def test_a_partial_that_hdf5_cannot_open_is_redone(self):
        # What a kill while HDF5 flushes the file can leave (2 of 97 kills at
        # the last pass in a loop): a superblock whose end lies past the
        # file's, or a root group lost.  Made here: the partial cut short.
        self.write_h5("in.h5", {"/m": pattern((400, 371), "<f8")})
        for damage in ("cut short", "no root group"):
            with self.subTest(damage=damage):
                proc = start(2, [XPOSE, *SLOW, "--layout", "chunked=53x47", "--filter", "gzip=1",
                                 "in.h5", "out.h5"], cwd=self.dir)
                self.wait_for_passes(proc, 5)
                os.kill(proc.pid, signal.SIGUSR1)
                self.assertEqual(finish(proc).returncode, STOPPED)
                if damage == "cut short":
                    os.truncate(self.partial, os.path.getsize(self.partial) - 100)
                else:  # the root group's object header, just after the superblock
                    with open(self.partial, "r+b") as f:
                        f.seek(48)
                        f.write(bytes(64))
                result = self.finish_with_resume(2, "in.h5")
                self.assertRegex(result.stderr, r"warning: starting over: the \d+ passes recorded "
                                 r"in out.h5.xpose-partial are redone: ")
                os.remove(self.out)


class Inputs(Hostile):
    def setUp(self):
        super().setUp()
        self.write_h5("in.h5", {"/m": pattern((600, 500), "<f8")})

    def test_input_that_is_the_outputs_lock_or_partial(self):
        for own in ("in.h5.xpose-lock", "in.h5.xpose-partial", "in.h5.xpose-resume"):
            for name in (own, "alias.h5"):
                with self.subTest(own=own, name=name):
                    os.link(self.path("in.h5"), self.path(own))
                    if name == "alias.h5":
                        os.symlink(own, self.path(name))
                    before = digest(self.path("in.h5"))
                    for extra in ([], ["--force"], ["--resume"]):
                        result = self.xpose(2, *extra, name, "in.h5")
                        self.assertEqual(result.returncode, USAGE, result)
                        self.assertEqual(result.stderr.count("xpose: error: input "), 1, result)
                        self.assertIn("of output in.h5: give another input or output",
                                      result.stderr)
                        self.assertEqual(digest(self.path(own)), before, "the input changed")
                    os.remove(self.path(own))
                    if name == "alias.h5":
                        os.remove(self.path(name))

    def test_input_truncated_during_the_run(self):
        proc = start(2, [XPOSE, *SLOW, "in.h5", "out.h5"], cwd=self.dir)
        self.wait_for_passes(proc, 20)
        os.truncate(self.path("in.h5"), os.path.getsize(self.path("in.h5")) // 2)
        result = finish(proc)
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("xpose: error: in.h5 changed while it was being transposed: its size "
                      "changed; nothing was published", result.stderr)
        self.assertFalse(os.path.exists(self.out))
        self.assertEqual(self.leftovers(), [], "a partial of another input was kept")

    def test_input_rewritten_between_stop_and_resume(self):
        proc = start(2, [XPOSE, *SLOW, "in.h5", "out.h5"], cwd=self.dir)
        self.wait_for_passes(proc, 20)
        os.kill(proc.pid, signal.SIGUSR1)
        self.assertEqual(finish(proc).returncode, STOPPED)
        # Same size, same mtime: what cp -p, rsync -a and touch -r leave.
        st = os.stat(self.path("in.h5"))
        with h5py.File(self.path("in.h5"), "r+") as f:
            f["/m"][3, 4] = -1.0
        os.utime(self.path("in.h5"), ns=(st.st_atime_ns, st.st_mtime_ns))
        self.assertEqual(os.path.getsize(self.path("in.h5")), st.st_size)
        result = self.xpose(2, "--resume", "in.h5", "out.h5")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("cannot resume from out.h5.xpose-partial: the input file changed since it "
                      "was started: it was rewritten or its attributes changed", result.stderr)
        self.assertIsNotNone(resume_record(self.partial), "a refused partial was removed")
        self.finish_with_resume(2, "in.h5", "--force")


class Signals(Hostile):
    """TERM, INT, HUP, USR1 and USR2 to mpirun, to its process group (what
    Ctrl-C and Slurm do) and to one rank, during the passes and during the
    final verification."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)

    def setUp(self):
        super().setUp()
        self.outcomes = {}

    def tearDown(self):
        print(f"\n{self.id()}: {self.outcomes}", flush=True)
        super().tearDown()

    def send(self, proc, sig, target):
        if target == "mpirun":
            os.kill(proc.pid, sig)
        elif target == "group":
            os.killpg(proc.pid, sig)
        else:
            ranks = ranks_of(proc)
            if ranks:
                os.kill(self.rng.choice(ranks), sig)

    def check_outcome(self, result, sig, target, in_name="in.h5"):
        mpirun_signalled = target in ("mpirun", "group") and sig in (
            signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
        published = self.assertPromise(result, in_name, mpirun_signalled)
        kind = (f"exit {result.returncode}, " + ("published" if published else
                "partial kept" if os.path.exists(self.partial) else "nothing kept"))
        self.outcomes[kind] = self.outcomes.get(kind, 0) + 1
        if not mpirun_signalled:
            self.assertIn(result.returncode, (OK, STOPPED), result)
        if result.returncode == STOPPED:
            self.assertEqual(result.stderr.count("xpose: error: stopped by "), 1, result)
        if published:  # a rerun of the job is a no-op
            again = self.xpose(2, "--resume", in_name, "out.h5")
            self.assertEqual(again.returncode, OK, again)
            self.assertIn("is already the transpose of", again.stdout)
        else:
            self.finish_with_resume(3, in_name)
        os.remove(self.out)
        self.assertEqual(self.leftovers(), [])

    def cases(self):
        """Every signal to every target, on 1 to 4 ranks under both MPI-IO layers, into
        contiguous and compressed outputs, in turn."""
        compressed = ["--layout", "chunked=50x40", "--filter", "gzip=1"]
        for i, (sig, target) in enumerate(
                (s, t) for s in self.SIGNALS for t in ("mpirun", "group", "rank")):
            storage = compressed if i % 5 in (1, 3) else []  # every target and rank count
            yield sig, target, 1 + i % 4, ("ompio", "romio321")[i // 4 % 2], storage

    def test_signals_during_the_passes(self):
        # mpirun passes TERM, INT and HUP on about 2 s late: passes for 4 s.
        self.write_h5("in.h5", {"/m": pattern((900, 800), "<f8")})
        for sig, target, ranks, io, storage in self.cases():
            with self.subTest(signal=sig.name, target=target, ranks=ranks, io=io, storage=storage):
                proc = start(ranks, [XPOSE, *SLOW, *storage, "in.h5", "out.h5"], cwd=self.dir,
                             env=with_environment({**MPIRUN_DEFAULTS, "OMPI_MCA_io": io}))
                self.wait_for_passes(proc, self.rng.randint(5, 600))
                self.send(proc, sig, target)
                result = finish(proc)
                wait_for_session_end(proc)
                self.check_outcome(result, sig, target)

    def test_signals_during_verification(self):
        # Passes are quick, reading everything back is not.  A file
        # attribute: a partial stopped here has it already when resumed.
        self.write_h5("big.h5", {"/m": pattern((2000, 1500), "<f8")}, {"/": {"source": "test"}})
        for sig, target, ranks, io, storage in self.cases():
            with self.subTest(signal=sig.name, target=target, ranks=ranks, io=io, storage=storage):
                proc = start(ranks, [XPOSE, "--memory", "2M", "--verify", *storage, "big.h5",
                                     "out.h5"],
                             cwd=self.dir,
                             env=with_environment({**MPIRUN_DEFAULTS, "OMPI_MCA_io": io}))
                record = self.wait_for(
                    proc, lambda r: int(r["passes_done"]) > 0 and
                    int(r["passes_done"]) == np.prod([int(x) for x in r["grid"].split()[:2]]))
                time.sleep(self.rng.uniform(0, 0.05))
                if record is not None and proc.poll() is None:
                    self.send(proc, sig, target)
                result = finish(proc)
                wait_for_session_end(proc)
                if result.returncode == STOPPED:
                    self.assertIn("before publishing: all", result.stderr)
                self.check_outcome(result, sig, target, "big.h5")


class Reruns(Hostile):
    def setUp(self):
        super().setUp()
        self.write_h5("in.h5", {"/m": pattern((60, 50), "<i4")})

    def test_resume_after_a_run_that_published_is_a_no_op(self):
        self.assertEqual(self.xpose(2, "in.h5", "out.h5").returncode, OK)
        st = os.stat(self.out)
        result = self.xpose(3, "--resume", "--json", "in.h5", "out.h5")
        self.assertEqual(result.returncode, OK, result)
        summary = json.loads(result.stdout)
        self.assertEqual((summary["status"], summary["already_done"]), ("ok", True))
        after = os.stat(self.out)
        self.assertEqual((after.st_ino, after.st_mtime_ns), (st.st_ino, st.st_mtime_ns),
                         "the output was rewritten")
        self.assertEqual(self.leftovers(), [])

    def test_resume_refuses_an_output_that_is_not_the_transpose(self):
        self.write_h5("out.h5", {"/m": pattern((50, 60), "<i4", seed=7)})
        before = digest(self.out)
        result = self.xpose(2, "--resume", "in.h5", "out.h5")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("xpose: error: output out.h5 exists and is not the transpose of in.h5:/m",
                      result.stderr)
        self.assertEqual(digest(self.out), before)
        # An output and a partial both: refused as any existing output.
        os.remove(self.out)
        self.assertEqual(self.xpose(2, "in.h5", "out.h5").returncode, OK)
        with open(self.partial, "wb") as f:
            f.write(b"left over")
        result = self.xpose(2, "--resume", "in.h5", "out.h5")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("output out.h5 exists; use --force to replace it", result.stderr)

    def test_resume_with_other_storage_says_what_it_keeps(self):
        self.write_h5("in.h5", {"/m": pattern((600, 500), "<f8")})
        proc = start(2, [XPOSE, *SLOW, "--layout", "chunked=64x64", "in.h5", "out.h5"],
                     cwd=self.dir)
        self.wait_for_passes(proc, 20)
        os.kill(proc.pid, signal.SIGUSR1)
        self.assertEqual(finish(proc).returncode, STOPPED)
        result = self.finish_with_resume(2, "in.h5", "--filter", "gzip=9")
        self.assertIn("note: resuming keeps the storage out.h5.xpose-partial was started with "
                      "(chunked 64 x 64), not --layout and --filter's (chunked", result.stderr)
        with h5py.File(self.out, "r") as f:
            self.assertEqual((f["/m"].chunks, f["/m"].compression), ((64, 64), None))


class Messages(Hostile):
    def setUp(self):
        super().setUp()
        self.write_h5("in.h5", {"/m": pattern((600, 500), "<i8")})  # random bytes: gzip cannot shrink them

    def test_partial_removed_during_the_run(self):
        proc = start(2, [XPOSE, *SLOW, "in.h5", "out.h5"], cwd=self.dir)
        self.wait_for_passes(proc, 20)
        os.remove(self.partial)
        result = finish(proc)
        self.assertEqual(result.returncode, ERROR, result)
        self.assertRegex(result.stderr, r"out.h5.xpose-partial was removed while xpose was "
                         r"writing it: the \d+ of \d+ passes done are lost")
        self.assertNotIn("are kept in", result.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_dangling_symlink_output_is_refused_up_front(self):
        os.symlink("nowhere/at/all.h5", self.out)
        result = self.xpose(2, "in.h5", "out.h5")
        self.assertEqual(result.returncode, ERROR, result)
        self.assertIn("output out.h5 exists (a symbolic link to nothing); use --force to "
                      "replace it", result.stderr)
        self.assertTrue(os.path.islink(self.out))
        self.assertEqual(self.leftovers(), [])
        result = self.xpose(2, "--force", "in.h5", "out.h5")
        self.assertEqual(result.returncode, OK, result)
        self.assertFalse(os.path.islink(self.out))
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")

    def test_closed_stdout_after_publishing_is_success(self):
        # One rank without mpirun, its stdout a pipe closed at once.
        reader = subprocess.Popen([XPOSE, "in.h5", "out.h5"], cwd=self.dir,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        reader.stdout.close()
        _, err = reader.communicate(timeout=60)
        self.assertEqual(reader.returncode, OK, err)
        self.assertTransposed("in.h5", "/m", "out.h5", "/m")

    def test_full_disk_with_a_compressed_output(self):
        with self.small_file_system("1m") as mnt:
            out = os.path.join(mnt, "out.h5")
            result = self.xpose(2, "--memory", "256K", "--filter", "gzip=1", "in.h5", out)
            self.assertEqual(result.returncode, ERROR, result)
            self.assertRegex(result.stderr, rf"xpose: error: not enough space for {out}: "
                             rf"{mnt} is full \([\d.]+ [KM]?i?B free\) with [\d.]+ [KM]iB of "
                             r"it written")
            self.assertEqual(os.listdir(mnt), [], "leftovers on the full disk")


class Json(Hostile):
    """--json: one valid object on stdout in every outcome."""

    def one_object(self, result):
        lines = [l for l in result.stdout.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, f"expected one JSON line\n{result}")
        summary = json.loads(lines[0])
        self.assertEqual(summary["exit_code"], result.returncode, result)
        return summary

    def test_usage_errors(self):
        self.write_h5("in.h5", {"/m": pattern((6, 5), "<f4")})
        for args in (["--json", "--memory", "0", "in.h5", "out.h5"], ["--json", "in.h5"],
                     ["--json", "--bogus", "in.h5", "out.h5"]):
            with self.subTest(args=args):
                summary = self.one_object(self.xpose(2, *args))
                self.assertEqual(summary["status"], "usage error")

    def test_names_that_are_not_utf8(self):
        self.write_h5("in.h5", {"/m": pattern((6, 5), "<f4")})
        name_in, name_out = os.fsdecode(b"in\xff\xfe.h5"), os.fsdecode(b"o\xe9\x80.h5")
        os.rename(self.path("in.h5"), self.path(name_in))
        summary = self.one_object(self.xpose(1, "--json", name_in, name_out))
        self.assertEqual(summary["status"], "ok")
        self.assertEqual((os.fsencode(summary["input"]), os.fsencode(summary["output"])),
                         (b"in\xff\xfe.h5", b"o\xe9\x80.h5"))
        summary = self.one_object(self.xpose(1, "--json", name_in, name_out))  # exists
        self.assertEqual(summary["status"], "error")
        self.assertIn(os.fsencode(name_out), os.fsencode(summary["message"]))

    def test_stopped_run(self):
        self.write_h5("in.h5", {"/m": pattern((600, 500), "<f8")})
        proc = start(2, [XPOSE, *SLOW, "--json", "in.h5", "out.h5"], cwd=self.dir)
        self.wait_for_passes(proc, 20)
        os.kill(proc.pid, signal.SIGUSR1)
        summary = self.one_object(finish(proc))
        self.assertEqual(summary["status"], "stopped")


if __name__ == "__main__":
    unittest.main(verbosity=2)
