"""Shared pieces of the end-to-end tests: running the tools under mpiexec
with a hard timeout (a hang is a failure, and no process is left behind),
and h5py/numpy as the independent reader and writer of test files.

Configured by ctest through the environment: XPOSE, XPOSE_GEN (programs),
XPOSE_WRITE_FAULT (a library), MPIEXEC, MPIEXEC_NUMPROC_FLAG and
MPIEXEC_PREFLAGS."""

import contextlib
import glob
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import h5py
import numpy as np

XPOSE = os.environ["XPOSE"]
XPOSE_GEN = os.environ["XPOSE_GEN"]
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")
NUMPROC_FLAG = os.environ.get("MPIEXEC_NUMPROC_FLAG", "-n")
PREFLAGS = shlex.split(os.environ.get("MPIEXEC_PREFLAGS", ""))

TIMEOUT = 120
# zarrita (npm), where jobs/test.sh installed it: Zarr v3 read as a
# JavaScript client reads it (tests/zarr/read_v3.mjs).
ZARRITA = os.environ.get("XPOSE_ZARRITA", "")
HAVE_ZARRITA = os.path.isdir(os.path.join(ZARRITA, "node_modules", "zarrita"))
READ_V3 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zarr", "read_v3.mjs")
# A rank whose collective HDF5 call failed while the others are still in it
# waits this long, then aborts the job with its message (docs/user-guide.md, "Exit status"):
# within TIMEOUT, so such a failure is reported as itself, not as a hang.
os.environ.setdefault("XPOSE_ABORT_TIMEOUT", "30")


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr

    def __repr__(self):
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def start(ranks, args, cwd=None, env=None):
    """Starts args under mpiexec in a session of its own (see finish)."""
    cmd = [MPIEXEC, NUMPROC_FLAG, str(ranks), *PREFLAGS, *map(str, args)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="surrogateescape",  # file names are bytes
                            start_new_session=True, cwd=cwd, env=env)


def finish(proc, timeout=TIMEOUT):
    """Waits for a started run; on timeout kills its whole session and fails."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"hung: {' '.join(proc.args)} ran over {timeout} s\n{out}\n{err}")
    return Result(proc.returncode, out, err)


def ranks_of(proc):
    """The rank processes under a started mpirun."""
    out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def holds_stops_back(pid):
    """Whether a rank is starting: SIGUSR1 held back, its handler not yet in."""
    try:
        with open(f"/proc/{pid}/status") as f:
            masks = dict(line.split(":\t") for line in f if line.startswith(("SigBlk", "SigCgt")))
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return False
    bit = 1 << (signal.SIGUSR1 - 1)
    return bool(int(masks["SigBlk"], 16) & bit) and not int(masks["SigCgt"], 16) & bit


def wait_for_session_end(proc, timeout=60):
    """Orphaned ranks of a killed mpirun notice and end; then none is left."""
    deadline = time.time() + timeout
    while time.time() < deadline and subprocess.run(
            ["pgrep", "-s", str(proc.pid)], capture_output=True).returncode == 0:
        time.sleep(0.1)
    subprocess.run(["pkill", "-9", "-s", str(proc.pid)])


def with_environment(extra):
    """This process's environment with `extra` (a dict, or None) on top."""
    return {**os.environ, **(extra or {})}


def mpirun(ranks, args, timeout=TIMEOUT, cwd=None, env=None):
    """Runs args under mpiexec (env: variables added for this run): a hang is
    a failure, and leaves no process behind."""
    return finish(start(ranks, args, cwd=cwd, env=with_environment(env)), timeout)


def resume_record(partial):
    """The newest intact resume record of a partial output (in the file
    beside it, OUT.xpose-resume), as a dict of strings, or None."""
    try:
        with open(partial.replace(".xpose-partial", ".xpose-resume"), "rb") as f:
            block = f.read(8192).ljust(8192, b"\0")
    except FileNotFoundError:
        return None
    best = None
    for slot in (block[:4096], block[4096:]):
        text = slot.split(b"\0", 1)[0].decode("utf-8", "replace")
        if not text.startswith("xpose partial output, resume record 7\n") or "\ncheck " not in text:
            continue
        fields = dict(line.split(" ", 1) for line in text.splitlines()[1:] if " " in line)
        if best is None or int(fields["sequence"]) > int(best["sequence"]):
            best = fields
    return best


def wait_for_record(proc, partial, predicate, timeout=60, poll=0.01):
    """The first resume record of `partial` that satisfies predicate, read
    every `poll` seconds while the run goes on; None if the run ends or
    `timeout` passes first."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        record = resume_record(partial)
        if record and predicate(record):
            return record
        time.sleep(poll)
    return None


def lookup3(data):
    """Bob Jenkins' lookup3 (hashlittle, initial value 0): HDF5's checksum
    of its metadata, the superblock's included."""
    mask = 0xffffffff

    def rot(x, k):
        return ((x << k) | (x >> (32 - k))) & mask

    def words(at):
        return [int.from_bytes(data[at + 4 * i:at + 4 * i + 4], "little") for i in range(3)]

    a = b = c = (0xdeadbeef + len(data)) & mask
    at = 0
    while len(data) - at > 12:
        x, y, z = words(at)
        a, b, c = (a + x) & mask, (b + y) & mask, (c + z) & mask
        a = ((a - c) & mask) ^ rot(c, 4); c = (c + b) & mask
        b = ((b - a) & mask) ^ rot(a, 6); a = (a + c) & mask
        c = ((c - b) & mask) ^ rot(b, 8); b = (b + a) & mask
        a = ((a - c) & mask) ^ rot(c, 16); c = (c + b) & mask
        b = ((b - a) & mask) ^ rot(a, 19); a = (a + c) & mask
        c = ((c - b) & mask) ^ rot(b, 4); b = (b + a) & mask
        at += 12
    if at == len(data):
        return c
    data = data[at:] + bytes(12 - (len(data) - at))
    x, y, z = words(0)
    a, b, c = (a + x) & mask, (b + y) & mask, (c + z) & mask
    c = ((c ^ b) - rot(b, 14)) & mask
    a = ((a ^ c) - rot(c, 11)) & mask
    b = ((b ^ a) - rot(a, 25)) & mask
    c = ((c ^ b) - rot(b, 16)) & mask
    a = ((a ^ c) - rot(c, 4)) & mask
    b = ((b ^ a) - rot(a, 14)) & mask
    c = ((c ^ b) - rot(b, 24)) & mask
    return c


def set_end_of_allocation(path, end):
    """Writes `end` into a version 2 or 3 superblock's end-of-file address,
    with its checksum: what a file whose superblock was last flushed
    before its end grew looks like."""
    with open(path, "r+b") as f:
        block = bytearray(f.read(48))
        assert block[:8] == b"\x89HDF\r\n\x1a\n" and block[8] in (2, 3), "not a v2/v3 superblock"
        block[28:36] = end.to_bytes(8, "little")
        block[44:48] = lookup3(bytes(block[:44])).to_bytes(4, "little")
        f.seek(0)
        f.write(block)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def pattern(shape, dtype, seed=0):
    """Distinct, non-zero values of any numpy dtype (structured ones too)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    raw = rng.integers(1, 255, size=(*shape, dtype.itemsize), dtype=np.uint8)
    if dtype.kind in "fc":  # keep floats finite: build them from integers
        n = int(np.prod(shape))
        values = (np.arange(n, dtype=np.float64) + 1.5).reshape(shape)
        if dtype.kind == "c":
            values = values + 1j * (values * 0.5 + 0.25)
        return values.astype(dtype)
    return raw.view(dtype).reshape(shape)


class ToolTestCase(unittest.TestCase):
    """Each test gets a fresh directory; helpers write inputs with h5py."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="xpose-e2e-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def write_h5(self, name, datasets, attrs=None, libver="earliest"):
        """datasets: {path: array}; attrs: {dataset path: {name: value}}."""
        with h5py.File(self.path(name), "w", libver=(libver, "latest")) as f:
            for key, value in datasets.items():
                f.create_dataset(key, data=value)
            for key, values in (attrs or {}).items():
                for attr, value in values.items():
                    f[key].attrs[attr] = value
        return self.path(name)

    def read_h5(self, name, dataset):
        with h5py.File(self.path(name), "r") as f:
            return f[dataset][...], f[dataset].dtype, dict(f[dataset].attrs)

    def xpose(self, ranks, *args, timeout=TIMEOUT, env=None):
        return mpirun(ranks, [XPOSE, *args], timeout=timeout, cwd=self.dir, env=env)

    @contextlib.contextmanager
    def small_file_system(self, size):
        """A tmpfs of `size` (e.g. "4m") mounted for the block; the test is
        skipped where that cannot be done (not root, no mount)."""
        if os.geteuid() != 0:
            self.skipTest("mounting a small tmpfs needs root")
        mnt = tempfile.mkdtemp(prefix="xpose-full-")
        try:
            mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mnt],
                                     capture_output=True, text=True)
            if mounted.returncode != 0:
                self.skipTest(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
            try:
                yield mnt
            finally:
                subprocess.run(["umount", mnt])
        finally:
            shutil.rmtree(mnt, ignore_errors=True)

    def read_with_zarrita(self, store, names):
        """Each array's values as zarrita reads them (read_v3.mjs): {name:
        the file of its values, raw, in this machine's byte order}."""
        script = os.path.join(ZARRITA, "read_v3.mjs")
        shutil.copy(READ_V3, script)  # where node finds zarrita
        out = tempfile.mkdtemp(dir=self.dir)
        read = subprocess.run(["node", script, self.path(store), out, *names],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(read.returncode, 0, read.stderr)
        return {name: os.path.join(out, name + ".bin") for name in names}

    def leftovers(self):
        """Partial outputs, resume records, locks, scratch files and
        netCDF-4 views left in the test's directory."""
        return sorted(glob.glob(os.path.join(self.dir, "*.xpose-partial")) +
                      glob.glob(os.path.join(self.dir, "*.xpose-resume")) +
                      glob.glob(os.path.join(self.dir, "*.xpose-lock")) +
                      glob.glob(os.path.join(self.dir, "*.xpose-scratch-*")) +
                      glob.glob(os.path.join(self.dir, "*.xpose-netcdf4")))

    def assertTransposed(self, in_name, in_dataset, out_name, out_dataset):
        a, a_type, a_attrs = self.read_h5(in_name, in_dataset)
        b, b_type, b_attrs = self.read_h5(out_name, out_dataset)
        self.assertEqual(a_type, b_type, "datatype changed")
        self.assertEqual(b.shape, a.shape[::-1])
        self.assertTrue(np.array_equal(a.T, b), "output is not the transpose of the input")
        self.assertEqual(sorted(a_attrs), sorted(b_attrs), "attributes differ")
        for key in a_attrs:
            if key == "DIMENSION_LIST":  # references into each file; see test_storage
                continue
            expected = np.asarray(a_attrs[key])
            if key in ("DIMENSION_LABELS", "_Netcdf4Coordinates"):  # per axis: swapped
                expected = expected[::-1]
            self.assertTrue(np.array_equal(expected, np.asarray(b_attrs[key])),
                            f"attribute {key} differs")
