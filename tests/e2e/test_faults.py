"""End to end, with the faults users meet: a full file system (a small
tmpfs, mounted when the tests run as root) and write errors injected into
the output's writes (tests/fault/write_fault.c, an LD_PRELOAD shim), at 1-4
ranks under both of Open MPI's MPI-IO layers.  Whatever happens, no run
exits 0 with a wrong output, none leaves a file under the output's name
when it fails, none hangs (every run has a hard timeout), and the input is
never modified.  Every run prints one JSON object (--json) that says how it
ended, aborted jobs included."""

import json
import os
import unittest

from harness import ToolTestCase, digest, pattern

WRITE_FAULT = os.environ.get("XPOSE_WRITE_FAULT", "")
IO_LAYERS = ("ompio", "romio321")


class Faults(ToolTestCase):
    def run_with(self, ranks, args, env):
        return self.xpose(ranks, *args, timeout=90, env=env)

    def assertSafe(self, result, out, before):
        """Exit 0 only with the exact transpose; otherwise nothing under out."""
        self.assertEqual(digest(self.path("in.h5")), before, "the input was modified")
        objects = [json.loads(l) for l in result.stdout.splitlines() if l.startswith("{")]
        self.assertEqual(len(objects), 1, f"expected one JSON object\n{result}")
        self.assertEqual(objects[0]["exit_code"], result.returncode, result)
        if result.returncode == 0:
            self.assertTransposed("in.h5", "/m", out, "/m")
            os.remove(out)
            return "published"
        self.assertFalse(os.path.exists(out), f"a failed run left {out}\n{result}")
        errors = [l for l in result.stderr.splitlines() if l.startswith("xpose: error: ")]
        self.assertEqual(len(errors), 1, f"expected one error message\n{result}")
        for leftover in self.leftovers():
            os.remove(leftover)
        return errors[0]

    @unittest.skipUnless(WRITE_FAULT, "the write-fault shim was not built")
    def test_write_errors_never_publish_a_wrong_file(self):
        self.write_h5("in.h5", {"/m": pattern((300, 257), "<f8")})  # 603 KiB
        before = digest(self.path("in.h5"))
        outcomes = {}
        for io in IO_LAYERS:
            for ranks in (1, 2, 3, 4):
                for error in ("ENOSPC", "EIO"):
                    for after, rank in ((20_000, None), (300_000, ranks - 1)):
                        # A rank whose write failed waits 2 s (not 120) for the others:
                        # those in a write that never ends (a third of these runs).
                        env = {"OMPI_MCA_io": io, "LD_PRELOAD": WRITE_FAULT,
                               "XPOSE_ABORT_TIMEOUT": "2",
                               "WRITE_FAULT_PATH": "out.h5.xpose-partial",
                               "WRITE_FAULT_AFTER": str(after), "WRITE_FAULT_ERRNO": error,
                               "WRITE_FAULT_RANK": "" if rank is None else str(rank)}
                        if rank is None:
                            del env["WRITE_FAULT_RANK"]
                        with self.subTest(io=io, ranks=ranks, error=error, after=after):
                            result = self.run_with(
                                ranks, ["--json", "--memory", "64K", "in.h5", "out.h5"], env)
                            outcome = self.assertSafe(result, self.path("out.h5"), before)
                            outcomes[(io, ranks, error, after)] = outcome
        kinds = {}
        for outcome in outcomes.values():
            kind = ("published" if outcome == "published"
                    else "verification failed" if "verification failed" in outcome
                    else "aborted" if "the job is aborted" in outcome else "failed")
            kinds[kind] = kinds.get(kind, 0) + 1
        print(f"\n{len(outcomes)} runs with write faults: {kinds}", flush=True)
        # The faults must have bitten: most runs fail, each with its message.
        failed = [o for o in outcomes.values() if o != "published"]
        self.assertGreater(len(failed), len(outcomes) // 2, outcomes)

    @unittest.skipUnless(WRITE_FAULT, "the write-fault shim was not built")
    def test_faults_in_a_scratch_file_never_publish_a_wrong_file(self):
        # (z, y, x) is two moves, the first into OUT.xpose-scratch-1
        self.write_h5("in.h5", {"/m": pattern((40, 30, 20), "<f8")})  # 188 KiB
        before = digest(self.path("in.h5"))
        for ranks in (1, 3):
            for fault, why in (({"WRITE_FAULT_ERRNO": "EIO"}, "/xpose-scratch"),
                               ({"WRITE_FAULT_LOSE": "1"}, "the file system lost or changed")):
                env = {"LD_PRELOAD": WRITE_FAULT, "XPOSE_ABORT_TIMEOUT": "2",
                       "WRITE_FAULT_PATH": "out.h5.xpose-scratch-1", "WRITE_FAULT_AFTER": "20000",
                       **fault}
                with self.subTest(ranks=ranks, fault=fault):
                    result = self.run_with(ranks, ["--json", "--memory", "16K", "--checkpoint",
                                                   "0", "--axes", "2,1,0", "in.h5", "out.h5"],
                                           env)
                    self.assertNotEqual(result.returncode, 0, result)
                    message = self.assertSafe(result, self.path("out.h5"), before)
                    self.assertIn(why, message)

    @unittest.skipUnless(WRITE_FAULT, "the write-fault shim was not built")
    def test_failed_syncs_never_publish_a_wrong_file(self):
        """Write-back errors show at fsync and fdatasync.  Raw passes sync the
        output from rank 0 for every rank (one page cache); HDF5's flush
        (MPI_File_sync) syncs from every rank."""
        self.write_h5("in.h5", {"/m": pattern((1000, 1000), "<f8")})  # 7.6 MiB: raw passes
        before = digest(self.path("in.h5"))
        raw = r"syncing \S*out\.h5\.xpose-partial:/m to storage failed: Input/output error"
        flush = r"flushing \S*out\.h5\.xpose-partial:/m to storage failed \(HDF5: "
        for call, ranks, rank, why in (("fdatasync", 1, None, raw), ("fdatasync", 3, None, raw),
                                       ("fdatasync", 3, 2, None),  # rank 0 synced for rank 2
                                       ("fsync", 3, 1, flush)):
            env = {"LD_PRELOAD": WRITE_FAULT, "XPOSE_ABORT_TIMEOUT": "2",
                   "WRITE_FAULT_PATH": "out.h5.xpose-partial", "WRITE_FAULT_SYNC": call}
            if rank is not None:
                env["WRITE_FAULT_RANK"] = str(rank)
            with self.subTest(call=call, ranks=ranks, rank=rank):
                result = self.run_with(ranks, ["--json", "--memory", "16M", "in.h5", "out.h5"],
                                       env)
                outcome = self.assertSafe(result, self.path("out.h5"), before)
                if why is None:
                    self.assertEqual(outcome, "published", result)
                else:
                    self.assertRegex(outcome, why)

    def test_full_file_system_fails_up_front(self):
        with self.small_file_system("4m") as mnt:
            self.write_h5("in.h5", {"/m": pattern((1000, 1000), "<f8")})  # 7.63 MiB
            before = digest(self.path("in.h5"))
            out = os.path.join(mnt, "out.h5")
            for io in IO_LAYERS:
                for ranks in (1, 2, 3, 4):
                    with self.subTest(io=io, ranks=ranks):
                        result = self.run_with(ranks, ["--json", "--memory", "1M", "in.h5", out],
                                               {"OMPI_MCA_io": io})
                        message = self.assertSafe(result, out, before)
                        self.assertRegex(message, rf"not enough space for {out}: it needs "
                                         rf"7.6\d MiB and {mnt} has [\d.]+ [KM]iB free")
                        self.assertEqual(os.listdir(mnt), [], "leftovers on the full disk")

    def test_no_room_for_scratch_files_fails_up_front(self):
        with self.small_file_system("4m") as mnt:
            self.write_h5("in.h5", {"/m": pattern((50, 80, 80), "<f8")})  # 2.44 MiB
            before = digest(self.path("in.h5"))
            out = os.path.join(mnt, "out.h5")
            for ranks in (1, 3):
                with self.subTest(ranks=ranks):  # (z, y, x): a scratch file as large again
                    result = self.run_with(ranks, ["--json", "--memory", "1M", "--axes", "2,1,0",
                                                   "in.h5", out], {})
                    message = self.assertSafe(result, out, before)
                    self.assertRegex(message, rf"not enough space for {out}: its scratch files "
                                     rf"need 2.4\d MiB more and {mnt} has [\d.]+ [KM]iB free")
                    self.assertEqual(os.listdir(mnt), [], "leftovers on the full disk")

if __name__ == "__main__":
    unittest.main(verbosity=2)
