"""The shipped Slurm scripts on a real Slurm (tests/slurm/cluster.sh brings
up munged, slurmctld and slurmd on localhost), submitted as the README says
by an ordinary user: a verified output; scancel mid-run and a time limit
leave a resumable partial and a clear log line, and the job continues when
resubmitted or requeued, and does nothing when submitted once more; a
warning as the job starts requeues it; --mem=1G on a 2 GiB input fits with
the default budget; a job array of three files; 4 ranks on 2 cores.
Skipped, with the reason, where the machine cannot run Slurm's daemons.

Configured by ctest: XPOSE_ROOT (the checkout), XPOSE (the binary),
XPOSE_GEN, XPOSE_WRITE_FAULT (the shim, for a slow file system)."""

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import holds_stops_back, pattern, resume_record  # noqa: E402

ROOT = os.environ["XPOSE_ROOT"]
XPOSE = os.environ["XPOSE"]
XPOSE_GEN = os.environ["XPOSE_GEN"]
WRITE_FAULT = os.environ.get("XPOSE_WRITE_FAULT", "")
CLUSTER = os.path.join(ROOT, "tests", "slurm", "cluster.sh")
USER = "xposetest"
# What the containers these tests run in need; real sites do not.
JOB_ENV = {"OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL",
         "DEADLINE", "PREEMPTED"}


def setUpModule():
    started = subprocess.run([CLUSTER, "start"], capture_output=True, text=True)
    if started.returncode == 77:
        raise unittest.SkipTest(started.stderr.strip())
    if started.returncode != 0:
        raise RuntimeError(f"cannot start Slurm:\n{started.stdout}\n{started.stderr}")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "-m", USER], check=True)


def tearDownModule():
    subprocess.run(["scancel", "-u", USER], capture_output=True)
    subprocess.run([CLUSTER, "stop"], capture_output=True)


class Slurm(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="xpose-slurm-")
        user = pwd.getpwnam(USER)
        os.chown(self.dir, user.pw_uid, user.pw_gid)
        self.uid, self.gid = user.pw_uid, user.pw_gid

    def tearDown(self):
        subprocess.run(["scancel", "-u", USER], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def give(self, name):
        os.chown(self.path(name), self.uid, self.gid)

    def write_input(self, name, shape, dtype="<f8"):
        with h5py.File(self.path(name), "w") as f:
            f["/m"] = pattern(shape, dtype)
        self.give(name)

    def sbatch(self, *args, env=None):
        """Submits from the checkout, as the README says, working in the test's directory."""
        clean = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": f"/home/{USER}", "LANG": "C.UTF-8",
                 **JOB_ENV, **(env or {})}  # a user's login, not the test suite's settings
        cmd = ["runuser", "-u", USER, "--", "env", "-i", *[f"{k}={v}" for k, v in clean.items()],
               "sbatch", f"--chdir={self.dir}", *args]
        result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        return int(re.search(r"Submitted batch job (\d+)", result.stdout).group(1))

    def job(self, job_id):
        text = subprocess.run(["scontrol", "show", "job", "-o", str(job_id)], capture_output=True,
                              text=True).stdout
        return dict(re.findall(r"(\w+)=(\S*)", text))

    def wait(self, job_id, timeout=240, release_requeued=False):
        """Waits for a final state; with release_requeued, starts requeued runs at once
        (Slurm holds them for 2 minutes)."""
        deadline, held_since = time.time() + timeout, None
        while time.time() < deadline:
            info = self.job(job_id)
            state = info.get("JobState", "")
            held = state == "PENDING" and info.get("Reason") == "BeginTime"
            held_since = (held_since or time.time()) if held else None
            # Not at once: a run started before the last one's credential is revoked fails.
            if release_requeued and held and time.time() - held_since > 5:
                subprocess.run(["scontrol", "update", f"JobId={job_id}", "StartTime=now"],
                               capture_output=True)
                held_since = None
            if state in FINAL:
                return info
            time.sleep(1)
        subprocess.run(["scancel", str(job_id)])
        self.fail(f"job {job_id} did not end in {timeout} s: {self.job(job_id)}\n{self.logs()}")

    def logs(self):
        text = ""
        for name in sorted(os.listdir(self.dir)):
            if name.endswith(".out"):
                with open(self.path(name)) as f:
                    text += f"--- {name}\n{f.read()}"
        return text

    def assertTransposed(self, in_name, out_name):
        with h5py.File(self.path(in_name), "r") as a, h5py.File(self.path(out_name), "r") as b:
            rows, cols = a["/m"].shape
            self.assertEqual(b["/m"].shape, (cols, rows))
            band = max(1, (64 << 20) // (cols * a["/m"].dtype.itemsize))  # 64 MiB at a time
            for r0 in range(0, rows, band):
                self.assertTrue(np.array_equal(a["/m"][r0:r0 + band, :].T, b["/m"][:, r0:r0 + band]),
                                f"rows {r0}+ are not transposed")

    def wait_for_passes(self, partial, passes, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            record = resume_record(partial)
            if record and int(record["passes_done"]) >= passes:
                return
            time.sleep(0.2)
        self.fail(f"the job never got {passes} passes done\n{self.logs()}")

    # ---- the tests

    def test_a_transpose_job_with_each_launcher(self):
        self.write_input("in.h5", (301, 257))
        for launcher in ("srun", "mpirun"):
            with self.subTest(launcher=launcher):
                out = f"out-{launcher}.h5"
                job = self.sbatch("--ntasks=2", "--mem=1G", "jobs/xpose.sbatch", "in.h5", out,
                                  "--memory", "64K", env={"XPOSE_LAUNCHER": launcher})
                info = self.wait(job)
                self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"),
                                 self.logs())
                self.assertTransposed("in.h5", out)
                with open(self.path(f"xpose-{job}.out")) as f:
                    log = f.read()
                self.assertIn(f"2 rank(s) via {launcher}", log)
                self.assertRegex(log, r"xpose: in.h5:/m \(301 x 257, float64 LE\) -> .*verified")

    def test_scancel_mid_run_then_resubmit(self):
        self.write_input("in.h5", (1200, 1100))
        args = ["jobs/xpose.sbatch", "in.h5", "out.h5", "--memory", "8K", "--checkpoint", "0"]
        job = self.sbatch("--ntasks=2", *args)
        self.wait_for_passes(self.path("out.h5.xpose-partial"), 100)
        subprocess.run(["runuser", "-u", USER, "--", "scancel", str(job)], check=True)
        info = self.wait(job)
        self.assertEqual(info["JobState"], "CANCELLED", self.logs())
        log = self.logs()
        # scancel signals the tasks too: SIGTERM, or the script's SIGUSR1 first.
        self.assertRegex(log, r"xpose: error: stopped by SIG(TERM|USR1) after \d+ of \d+ passes; "
                              r"out.h5.xpose-partial keeps them")
        self.assertIn("xpose.sbatch: stopped: the job was cancelled; resubmit the same job to "
                      "continue", log)
        self.assertFalse(os.path.exists(self.path("out.h5")))
        self.assertIsNotNone(resume_record(self.path("out.h5.xpose-partial")))
        again = self.sbatch("--ntasks=2", *args)
        info = self.wait(again)
        self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"), self.logs())
        self.assertIn("resuming from out.h5.xpose-partial", self.logs())
        self.assertTransposed("in.h5", "out.h5")
        # The same job once more (a rerun of a finished array, say): nothing to do.
        before = os.stat(self.path("out.h5"))
        rerun = self.sbatch("--ntasks=2", *args)
        info = self.wait(rerun)
        self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"), self.logs())
        self.assertIn("out.h5:/m is already the transpose of in.h5:/m", self.logs())
        after = os.stat(self.path("out.h5"))
        self.assertEqual((after.st_ino, after.st_mtime_ns), (before.st_ino, before.st_mtime_ns))

    @unittest.skipUnless(WRITE_FAULT, "the shim that slows writes was not built")
    def test_time_limit_stops_requeues_and_finishes(self):
        # A run of about 45 s on a slow file system (8 ms per write), in jobs
        # of one minute warned 50 s before their limit (Slurm warns up to 30 s late).
        self.write_input("in.h5", (1200, 1100))
        job = self.sbatch("--ntasks=2", "--time=1", "--signal=B:USR1@50", "jobs/xpose.sbatch",
                          "in.h5", "out.h5", "--memory", "256K",
                          env={"LD_PRELOAD": WRITE_FAULT, "WRITE_FAULT_PATH": "out.h5.xpose-partial",
                               "WRITE_FAULT_DELAY_US": "8000"})
        info = self.wait(job, timeout=600, release_requeued=True)
        log = self.logs()
        self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"), log)
        self.assertGreaterEqual(int(info["Restarts"]), 1, log)
        self.assertRegex(log, r"xpose: error: stopped by SIGUSR1 after \d+ of \d+ passes")
        self.assertIn("xpose.sbatch: stopped: the time limit is near; requeueing", log)
        self.assertIn("resuming from out.h5.xpose-partial", log)
        self.assertNotIn("TIME LIMIT", log)
        self.assertTransposed("in.h5", "out.h5")

    def test_a_warning_as_the_job_starts_requeues_it_with_each_launcher(self):
        # The warning may come as the ranks start, before they can take it
        # (Slurm sends it up to 30 s late, so as early as a job with a short
        # limit starts): the job requeues, never fails.
        self.write_input("in.h5", (301, 257))
        for launcher in ("srun", "mpirun"):
            with self.subTest(launcher=launcher):
                out = f"out-{launcher}.h5"
                job = self.sbatch("--ntasks=2", "jobs/xpose.sbatch", "in.h5", out, "--memory",
                                  "64K", env={"XPOSE_LAUNCHER": launcher})
                deadline = time.time() + 60
                while not any(holds_stops_back(pid) for pid in subprocess.run(
                        ["pgrep", "-u", USER, "-x", "xpose"], capture_output=True,
                        text=True).stdout.split()):
                    self.assertLess(time.time(), deadline, f"no rank seen starting\n{self.logs()}")
                subprocess.run(["scancel", "--batch", "--signal=USR1", str(job)], check=True)
                info = self.wait(job, release_requeued=True)
                log = self.logs()
                self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"), log)
                self.assertGreaterEqual(int(info["Restarts"]), 1, log)
                self.assertIn("xpose.sbatch: stopped: the time limit is near; requeueing", log)
                self.assertTransposed("in.h5", out)

    def test_two_gib_input_in_one_gib_job_with_the_default_budget(self):
        gen = subprocess.run(["mpirun", "-n", "2", XPOSE_GEN, "--type", "f64", "16384", "16384",
                              self.path("big.h5:/m")], capture_output=True, text=True,
                             env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1",
                                  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        self.assertEqual(gen.returncode, 0, gen.stderr)
        self.give("big.h5")
        job = self.sbatch("--ntasks=2", "--mem=1G", "jobs/xpose.sbatch", "big.h5", "out.h5",
                          "--verbose")
        info = self.wait(job, timeout=600)
        log = self.logs()
        self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"), log)
        with open("/run/xpose-slurm/limits") as f:
            if f.read().strip() == "cgroup":
                self.assertRegex(log, r"memory budget 256.00 MiB per rank: half of the cgroup "
                                      r"limit in \S+ \(1.00 GiB\)")
        self.assertTransposed("big.h5", "out.h5")

    def test_job_array_of_three_files(self):
        with open(self.path("files.txt"), "w") as f:
            for i, shape in enumerate(((37, 23), (5, 101), (64, 64))):
                self.write_input(f"in{i}.h5", shape, "<i4")
                f.write(f"in{i}.h5 out{i}.h5\n")
        self.give("files.txt")
        job = self.sbatch("--array=1-3", "--ntasks=2", "jobs/xpose-array.sbatch", "files.txt")
        deadline = time.time() + 240
        while time.time() < deadline and subprocess.run(
                ["squeue", "-h", "-j", str(job)], capture_output=True, text=True).stdout.strip():
            time.sleep(1)
        for i in range(3):
            self.assertTransposed(f"in{i}.h5", f"out{i}.h5")
            self.assertTrue(os.path.exists(self.path(f"xpose-array-{job}_{i + 1}.out")),
                            os.listdir(self.dir))

    def test_several_inputs_joined_in_one_job(self):
        # The script's IN OUT, the other inputs by --inputs (xpose takes them
        # anywhere among its options), joined along time and made a series.
        try:
            import netCDF4
        except ImportError:  # Debian's python3-netcdf4
            self.skipTest("python3-netcdf4 is not installed")
        parts = []
        for i, days in enumerate((5, 3, 4)):
            name = f"part{i}.nc"
            with netCDF4.Dataset(self.path(name), "w") as nc:
                nc.createDimension("time", None)
                nc.createDimension("lat", 6)
                nc.createDimension("lon", 7)
                nc.createVariable("time", "f8", ("time",))[:] = np.arange(days) + 10 * i
                nc.createVariable("tas", "f4", ("time", "lat", "lon"))[:] = (
                    pattern((days, 6, 7), "<f4"))
            self.give(name)
            parts.append(name)
        with open(self.path("rest.txt"), "w") as f:
            f.write("\n".join(parts[1:]) + "\n")
        self.give("rest.txt")
        job = self.sbatch("--ntasks=2", "jobs/xpose.sbatch", parts[0], "series.nc", "--inputs",
                          "rest.txt", "--dims", "lat,lon,time")
        info = self.wait(job)
        self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"), self.logs())
        joined = []
        for name in parts:
            with netCDF4.Dataset(self.path(name)) as nc:
                joined.append(nc["tas"][...])
        with netCDF4.Dataset(self.path("series.nc")) as nc:
            np.testing.assert_array_equal(nc["tas"][...],
                                          np.concatenate(joined).transpose(1, 2, 0))

    def test_four_ranks_on_two_cores(self):
        self.write_input("in.h5", (97, 89))
        job = self.sbatch("--ntasks=4", "--overcommit", "jobs/xpose.sbatch", "in.h5", "out.h5",
                          "--memory", "8K")
        info = self.wait(job)
        self.assertEqual((info["JobState"], info["ExitCode"]), ("COMPLETED", "0:0"), self.logs())
        self.assertIn("4 rank(s)", self.logs())
        self.assertTransposed("in.h5", "out.h5")


if __name__ == "__main__":
    outcome = unittest.main(verbosity=2, exit=False).result
    ran_nothing = outcome.testsRun == len(outcome.skipped)  # Slurm cannot run here: ctest's skip
    sys.exit(1 if not outcome.wasSuccessful() else 77 if ran_nothing else 0)
