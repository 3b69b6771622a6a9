"""Damaged Zarr stores, read as xpose reads them, against an independent
reading (issue 74).

Seed stores of every kind xpose reads: v2 from xarray and zarr-python
(Blosc, zstd, gzip, zlib with shuffle, none; big- and little-endian;
integers and floats; chunks never written; "/" keys), v3 by hand (crc32c,
big-endian, big-endian shards with inner chunks left out) and v3 from xpose itself
(sharded).  From a fixed seed, CASES damaged copies: fields of their JSON
changed (numbers past 2^61, 2^63, negative, of another type), removed,
swapped or duplicated, their text cut; chunks and shards cut, flipped,
swapped, removed, lengthened a little or far past what they encode to;
shard indexes pointing elsewhere.

Each copy is read by read_stores (tests/zarr/read_stores.c: the tool's
reading, each store in a child under a time and a memory limit) and by
zarr_reference.py (numpy and numcodecs, in a child of its own).  It fails
where xpose's reading died (a signal, a time-out, memory past the limit),
gave a message of more than one line or not naming the store, read
values that differ from the reference's or that the reference refuses, or
changed the store.  A refusal where the reference reads is allowed (xpose
refuses what it cannot read exactly).  One copy in 40 is also run through
the whole tool (--dims, into netCDF-4): exit 0 with every variable equal
to the reference's reading, or one message naming the store, nothing
published, nothing left behind.

    fuzz_stores.py [CASES [SEED]]
Environment: XPOSE (the tool), XPOSE_READ_STORES (read_stores)."""

import collections
import hashlib
import json
import os
import pickle
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zarr_reference as ref  # noqa: E402

try:
    import netCDF4
    import numcodecs
    import xarray
    import zarr
except ImportError:
    print("skipped: python3-netcdf4, python3-xarray or python3-zarr is missing")
    sys.exit(77)

XPOSE = os.environ["XPOSE"]
READER = os.environ["XPOSE_READ_STORES"]
BATCH = 500
TOOL_EVERY = 40


# ---- seeds ----

def cf_dataset(big_endian, nt=6, ny=4, nx=5):
    e = ">" if big_endian else "<"
    rng = np.random.default_rng(74)
    tas = (250 + 30 * rng.random((nt, ny, nx))).astype(e + "f4")
    tas[1, 1:3, 2:4] = np.nan
    return xarray.Dataset(
        {"tas": (("time", "lat", "lon"), tas, {"units": "K"})},
        coords={"time": ("time", (np.arange(nt) + 0.5).astype(e + "f8"), {"units": "days"}),
                "lat": ("lat", np.linspace(-60, 60, ny).astype(e + "f4")),
                "lon": ("lon", np.linspace(0, 288, nx).astype(e + "f4"))},
        attrs={"title": "seed"})


def make_seeds(root):
    """{name: (store, --dims for the tool)}."""
    seeds = {}

    def path(name):
        return os.path.join(root, name + ".zarr")

    cf_dataset(False).to_zarr(path("v2_blosc"), encoding={"tas": {"chunks": (2, 4, 5)}})
    cf_dataset(True).to_zarr(path("v2_zstd_be"), encoding={
        "tas": {"chunks": (3, 2, 5), "compressor": numcodecs.Zstd(3)},
        "time": {"compressor": numcodecs.GZip(4)}})
    cf_dataset(True).to_zarr(path("v2_none_be"), encoding={
        "tas": {"chunks": (6, 2, 2), "compressor": None}, "lat": {"compressor": None}})
    for name in ("v2_blosc", "v2_zstd_be", "v2_none_be"):
        seeds[name] = (path(name), "lat,lon,time")

    g = zarr.open_group(path("v2_ints"), mode="w")
    v = (np.arange(7 * 6, dtype=">i8") * 1234567 - 99).reshape(7, 6)
    a = g.create_dataset("counts", shape=v.shape, chunks=(3, 4), dtype=">i8", fill_value=-5,
                         compressor=numcodecs.Zlib(3), filters=[numcodecs.Shuffle(8)],
                         dimension_separator="/", write_empty_chunks=False)
    v[3:6, 0:4] = -5  # a chunk of the fill value: never written
    a[...] = v
    a.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    b = g.create_dataset("flags", shape=(7, 6), chunks=(7, 3), dtype="|u1", fill_value=3,
                         compressor=numcodecs.GZip(1))
    b[...] = (np.arange(42) % 200).reshape(7, 6).astype("u1")
    b.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    s = g.create_dataset("level", shape=(7,), chunks=(2,), dtype="<i2", fill_value=None,
                         compressor=numcodecs.Blosc("zstd", 1, 2))
    s[...] = np.arange(7, dtype="<i2") * 300 - 1000
    s.attrs["_ARRAY_DIMENSIONS"] = ["y"]
    seeds["v2_ints"] = (path("v2_ints"), "x,y")

    ref.write_group_v3(path("v3_hand"), {"title": "by hand"})
    values = (np.arange(5 * 4 * 6, dtype=">f8") / 7).reshape(5, 4, 6)
    ref.write_v3(path("v3_hand"), "v", values, (2, 4, 3), dims=["t", "y", "x"], endian="big",
                 codecs=[{"name": "zstd", "configuration": {"level": 1}}, {"name": "crc32c"}],
                 fill=-1.0, missing=[(1, 0, 1)])
    ref.write_v3(path("v3_hand"), "s", (values * 100).astype(">i4"), (2, 2, 3),
                 dims=["t", "y", "x"], shards=(4, 4, 6), endian="big",
                 codecs=[{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                              "shuffle": "shuffle"}}],
                 fill=7, missing=[((0, 0, 0), 1), ((1, 0, 0), 2)])
    ref.write_v3(path("v3_hand"), "y", np.arange(4, dtype="<u2"), (4,), dims=["y"],
                 codecs=[{"name": "gzip", "configuration": {"level": 1}}], fill=0)
    seeds["v3_hand"] = (path("v3_hand"), "y,x,t")

    nc = os.path.join(root, "seed.nc")
    cf_dataset(False, 8, 6, 5).to_netcdf(nc)
    made = subprocess.run([XPOSE, "-q", "--zarr-format", "3", "--chunks", "time/2,lat/3,lon/5",
                           "--shards", "time/4,lat/6,lon/5", nc, path("v3_xpose")],
                          capture_output=True, text=True, env=tool_env())
    assert made.returncode == 0, made.stderr
    seeds["v3_xpose"] = (path("v3_xpose"), "lat,lon,time")
    return seeds


def tool_env():
    # one rank without mpirun: Open MPI's singleton, without its daemon
    return {**os.environ, "OMPI_MCA_ess_singleton_isolated": "1", "XPOSE_ABORT_TIMEOUT": "10"}


# ---- damage ----

NUMBERS = [-1, 0, 1, 2, 3, 255, 65537, 2 ** 31, 2 ** 32 + 1, 2 ** 61, 2 ** 61 + 3, 2 ** 62,
           2 ** 63 - 1, -2 ** 63, 1e300, 0.5]
TEXTS = ["", "x", "<f4", ">f4", "<i8", ">u2", "|u1", "|S1", "<f2", "float32", "int64", "uint8",
         "bool", "bytes", "blosc", "zstd", "gzip", "zlib", "crc32c", "shuffle", "transpose",
         "sharding_indexed", "big", "little", "C", "F", "/", ".", "NaN", "Infinity", "0x7fc00000",
         "0xffffffffffffffff", "default", "v2", "regular", "start", "end", "lz4", "snappy"]


def json_paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from json_paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from json_paths(v, prefix + (i,))


def get_at(node, path):
    for p in path:
        node = node[p]
    return node


def random_value(rng, old):
    r = rng.random()
    if r < 0.45:
        return rng.choice(NUMBERS)
    if r < 0.7:
        return rng.choice(TEXTS)
    if r < 0.8 and isinstance(old, list):
        return [rng.choice(NUMBERS) if isinstance(x, int) else x for x in old]
    return rng.choice([None, True, [], {}, [1], [2 ** 62, 2 ** 62, 18], {"name": "bytes"}])


def damage_json(rng, path):
    with open(path, "rb") as f:
        text = f.read()
    try:
        meta = json.loads(text)
    except ValueError:  # damaged already
        meta = None
    if meta is None or rng.random() < 0.1:  # the text itself
        text = bytearray(text or b"{")
        if rng.random() < 0.5:
            del text[rng.randrange(len(text)):]
        else:
            text[rng.randrange(len(text))] = rng.randrange(256)
        with open(path, "wb") as f:
            f.write(bytes(text))
        return "text"
    paths = [p for p in json_paths(meta) if p]
    if not paths:
        return "nothing to change"
    target = rng.choice(paths)
    parent, key = get_at(meta, target[:-1]), target[-1]
    how = rng.random()
    if how < 0.2 and isinstance(parent, dict):
        del parent[key]
        what = "removed"
    elif how < 0.3 and isinstance(parent, list):
        parent.insert(key, parent[key])
        what = "doubled"
    elif how < 0.4:
        other = rng.choice(paths)
        if other[:len(target)] == target or target[:len(other)] == other:
            other = target  # one inside the other: swapped, they would hold themselves
        try:
            a, b = get_at(meta, target), get_at(meta, other)
            parent[key] = b
            get_at(meta, other[:-1])[other[-1]] = a
        except (KeyError, IndexError, TypeError):
            pass
        what = "swapped"
    else:
        parent[key] = random_value(rng, parent[key])
        what = "changed"
    with open(path, "w") as f:
        json.dump(meta, f)
    return f"{what} {'/'.join(map(str, target))}"


def damage_chunk(rng, path, chunks):
    how = rng.randrange(8)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if how == 0 and data:
        del data[rng.randrange(len(data)):]
    elif how == 1 and data:
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif how == 2:
        os.unlink(path)
        return "chunk removed"
    elif how == 3:
        other = rng.choice(chunks)
        with open(other, "rb") as f:
            data = bytearray(f.read())
    elif how == 4:
        data += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    elif how == 7:  # far longer than any chunk of its array encodes to
        data += bytes(3 * len(data) + 8192)
    elif how == 5 and len(data) >= 20:  # a shard index's entry, its crc32c made right
        count = 1
        while 16 * count + 4 <= len(data) and rng.random() < 0.7:
            count += 1
        at = len(data) - 4 - 16 * rng.randrange(count)
        if at >= 16:
            data[at - 16:at] = (rng.choice([0, 8, 2 ** 63, 2 ** 64 - 1, len(data)]).to_bytes(8, "little") +
                                rng.choice([1, 64, 2 ** 62, 2 ** 64 - 1]).to_bytes(8, "little"))
            index = bytes(data[len(data) - 4 - 16 * count:len(data) - 4])
            data[-4:] = ref.crc32c(index).to_bytes(4, "little")
    else:
        data = bytearray()
    with open(path, "wb") as f:
        f.write(bytes(data))
    return f"chunk damaged ({how})"


def damage(rng, store):
    metas, chunks = [], []
    for root, _, files in os.walk(store):
        for name in files:
            (metas if name in ("zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata")
             else chunks).append(os.path.join(root, name))
    metas.sort(), chunks.sort()
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if chunks and rng.random() < 0.3:
            done.append(damage_chunk(rng, rng.choice(chunks), chunks))
            chunks = [c for c in chunks if os.path.exists(c)]
        else:
            meta = rng.choice([m for m in metas if not m.endswith(".zmetadata")] or metas)
            done.append(f"{os.path.relpath(meta, store)}: {damage_json(rng, meta)}")
    return "; ".join(done)


def tree_digest(path):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(root, name)
            h.update(p.encode())
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


# ---- the independent reading, in a child ----

def reference(store, seconds=30):
    """("read", {name: Array}) or ("refused", why) or ("large", why) or
    ("died", why)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            outcome = ("read", ref.read_store(store))
        except ref.Refused as e:
            outcome = ("large" if str(e) == "large" else "refused", str(e))
        except Exception as e:  # noqa: BLE001: a reader's own fault is a refusal here
            outcome = ("refused", f"{type(e).__name__}: {e}")
        with os.fdopen(w, "wb") as f:
            f.write(pickle.dumps(outcome))
        os._exit(0)
    os.close(w)
    data, deadline = b"", time.time() + seconds
    with os.fdopen(r, "rb") as f:
        while time.time() < deadline:
            ready, _, _ = select.select([f], [], [], deadline - time.time())
            if not ready:
                break
            chunk = os.read(f.fileno(), 1 << 20)
            if not chunk:
                break
            data += chunk
    if time.time() >= deadline:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if not data:
        return ("died", f"status {status}")
    return pickle.loads(data)


def xpose_values(out, name):
    with open(os.path.join(out, name + ".txt")) as f:
        kind, size, ndims, *shape = f.read().split()
    dtype = np.dtype("S1" if kind == "S" else f"={kind}{size}")
    values = np.fromfile(os.path.join(out, name + ".bin"), dtype)
    return values.reshape([int(s) for s in shape])


def same(expected, got):
    e = expected.astype(expected.dtype.newbyteorder("="))
    return e.dtype == got.dtype and e.shape == got.shape and e.tobytes() == got.tobytes()


def judge(store, out, said, expected):
    """Why the case fails, or None."""
    status, _, message = said.partition(" ")
    if status == "died":
        return f"xpose's reading died by signal {message}"
    if status == "refused":
        if "\x1e" in message or not message.strip():
            return f"not one message: {message!r}"
        if store not in message:
            return f"the message does not name the store: {message!r}"
        return None
    if expected[0] == "died":
        return None  # the reference's own fault: nothing to hold xpose to
    if status == "large":
        return None if expected[0] in ("large", "refused") else "xpose found it large"
    if expected[0] != "read":
        return f"xpose read what the reference refuses ({expected[1]})"
    names = sorted(n for n in os.listdir(out) if n.endswith(".txt"))
    if [n[:-4] for n in names] != sorted(expected[1]):
        return f"other arrays: {names} against {sorted(expected[1])}"
    for name, array in expected[1].items():
        if not same(array.values, xpose_values(out, name)):
            return f"{name}: other values than the reference's"
    return None


# ---- the whole tool ----

def run_tool(store, dims, work):
    out = os.path.join(work, "out.nc")
    proc = subprocess.run([XPOSE, "-q", "--dims", dims, store, out], capture_output=True,
                          text=True, timeout=120, env=tool_env(), cwd=work)
    return proc, out


def judge_tool(store, dims, work, expected):
    before = tree_digest(store)
    try:
        proc, out = run_tool(store, dims, work)
    except subprocess.TimeoutExpired:
        return "the tool hung"
    if tree_digest(store) != before:
        return "the tool changed the store"
    left = sorted(n for n in os.listdir(work) if n != "out.nc")
    kept = ["out.nc.xpose-partial", "out.nc.xpose-resume"]  # for --resume, where it says so
    if left and not (left == kept and "out.nc.xpose-partial: once the cause is fixed" in proc.stderr):
        return f"left behind: {left}"
    if proc.returncode < 0:
        return f"the tool died by signal {-proc.returncode}: {proc.stderr[-500:]}"
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        if os.path.exists(out):
            return "failed, but published"
        if len(lines) != 1 or "error" not in lines[0]:
            return f"not one message: {proc.stderr!r}"
        return None
    if expected[0] != "read":
        return f"the tool published what the reference refuses ({expected[1]})"
    order = dims.split(",")
    with netCDF4.Dataset(out) as f:
        for name, array in expected[1].items():
            var = f[name]
            var.set_auto_maskandscale(False)
            got = var[...]
            values = array.values
            dims_in = array.dims or []
            if var.dimensions != tuple(dims_in) and len(dims_in) == values.ndim:
                values = values.transpose([dims_in.index(d) for d in var.dimensions])
            if not same(values, np.asarray(got).astype(np.asarray(got).dtype.newbyteorder("="))):
                return f"{name}: the output's values are not the reference's"
    del order
    return None


def main():
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 74)
    # thousands of small stores: in memory where there is a tmpfs for them
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    work = tempfile.mkdtemp(prefix="xpose-zarr-fuzz-", dir=shm)
    failures, tally = [], collections.Counter()
    started = time.time()
    try:
        seeds = make_seeds(os.path.join(work, "seeds"))
        for name, (store, _) in seeds.items():  # every seed reads alike
            expected = reference(store)
            assert expected[0] == "read", (name, expected)
        names = sorted(seeds)
        for first in range(0, cases, BATCH):
            batch = os.path.join(work, "batch")
            shutil.rmtree(batch, ignore_errors=True)
            lines, meta = [], {}
            for c in range(first, min(cases, first + BATCH)):
                seed = names[c % len(names)]
                store = os.path.join(batch, f"{c:05d}", os.path.basename(seeds[seed][0]))
                shutil.copytree(seeds[seed][0], store)
                what = damage(rng, store) if c >= len(names) else "none"
                out = os.path.join(batch, f"{c:05d}", "read")
                os.makedirs(out)
                meta[store] = (c, seed, what, out, tree_digest(store))
                lines.append(f"{store} {out}\n")
            with open(os.path.join(batch, "list"), "w") as f:
                f.writelines(lines)
            # xpose's readings in their children while the reference reads
            reader = subprocess.Popen([READER, os.path.join(batch, "list")],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            expectations = {store: reference(store) for store in meta}
            said, _ = reader.communicate(timeout=3600)
            results = {}
            for line in said.splitlines():
                store, _, rest = line.partition(" ")
                results[store] = rest
            for store, (c, seed, what, out, digest) in meta.items():
                if store not in results:
                    failures.append((c, seed, what, "no outcome from read_stores"))
                    continue
                expected = expectations[store]
                why = judge(store, out, results[store], expected)
                if tree_digest(store) != digest:
                    why = "the store changed"
                if why is None and c % TOOL_EVERY == 0:
                    tool_dir = os.path.join(os.path.dirname(store), "tool")
                    os.makedirs(tool_dir)
                    why = judge_tool(store, seeds[seed][1], tool_dir, expected)
                    tally["tool " + ("read" if why is None and expected[0] == "read" else "run")] += 1
                tally[(seed, results[store].split(" ")[0], expected[0])] += 1
                if why:
                    failures.append((c, seed, what, why))
                    shutil.copytree(os.path.dirname(store), os.path.join(work, "failed", f"{c:05d}"))
            shutil.rmtree(batch, ignore_errors=True)
    finally:
        if not failures:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{cases} damaged stores in {time.time() - started:.0f} s; work in {work}")
    print(f"{'seed':<12} {'xpose':<8} {'reference':<10} count")
    for key in sorted(k for k in tally if isinstance(k, tuple)):
        print(f"{key[0]:<12} {key[1]:<8} {key[2]:<10} {tally[key]}")
    print(f"the whole tool: {tally['tool read']} read, {tally['tool run']} refused or large")
    for c, seed, what, why in failures[:40]:
        print(f"FAILED case {c} ({seed}: {what}): {why}")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
