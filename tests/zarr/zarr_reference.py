"""An independent reading of Zarr v2 and v3 stores, for the tests to hold
xpose's readings against: numpy and numcodecs decode each chunk, and
every field of the metadata is checked here as the Zarr specifications
say, in Python, sharing nothing with xpose's C.  Also writes v3 stores
by hand (big-endian, crc32c, shards, chunks left out), which Debian's
zarr-python 2 cannot.

    read_store(path)  -> {name: Array}, or raises Refused
    write_v3(...)     -> an array of a v3 group made by hand
"""

import json
import math
import os
import struct

import numpy as np
import numcodecs

# Arrays larger than this are not read (Refused("large")): a damaged
# shape must not take the test's memory.
MOST_VALUES = 1 << 24


class Refused(Exception):
    """The store is not one a Zarr reader can read as it is."""


_V3_TYPES = {"int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
             "uint16": "u2", "uint32": "u4", "uint64": "u8", "float32": "f4", "float64": "f8"}


class Array:
    def __init__(self, values, dims, attrs):
        self.values, self.dims, self.attrs = values, dims, attrs


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _load(path):
    try:
        with open(path, "rb") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    try:
        meta = json.loads(text, object_pairs_hook=_no_duplicates,
                          parse_constant=lambda c: _refuse(f"{path}: {c} is not JSON"))
    except (ValueError, RecursionError) as e:
        raise Refused(f"{path}: {e}")
    if not isinstance(meta, dict):
        raise Refused(f"{path}: not an object")
    return meta


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise Refused("a key twice")
    return dict(pairs)


def _refuse(why):
    raise Refused(why)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _ints(x, n, least, what):
    if not isinstance(x, list) or len(x) != n or not all(_is_int(v) and v >= least for v in x):
        raise Refused(f"{what}: {x!r}")
    return [int(v) for v in x]


def _fill(value, dtype):
    if value is None:
        return None
    if dtype.kind == "f":
        if isinstance(value, str):
            if value == "NaN":
                return np.array(np.nan, dtype)
            if value in ("Infinity", "-Infinity"):
                return np.array(np.inf if value[0] == "I" else -np.inf, dtype)
            if value.startswith("0x") and len(value) == 2 + 2 * dtype.itemsize:
                try:
                    bits = int(value, 16)
                except ValueError:
                    raise Refused(f"fill value {value!r}")
                return np.frombuffer(bits.to_bytes(dtype.itemsize, "little"),
                                     dtype.newbyteorder("<"))[0].astype(dtype)
            raise Refused(f"fill value {value!r}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return np.array(value, dtype)
        raise Refused(f"fill value {value!r}")
    if not _is_int(value):
        raise Refused(f"fill value {value!r}")
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise Refused(f"fill value {value} out of range")
    return np.array(value, dtype)


# ---- codecs: each a (decode) function of bytes -> bytes ----

def _blosc(config):
    if not isinstance(config.get("cname"), str) or config["cname"] not in (
            "lz4", "lz4hc", "blosclz", "zstd", "zlib"):
        raise Refused(f"blosc cname {config.get('cname')!r}")
    return numcodecs.Blosc(config["cname"]).decode


def _bytes_to_bytes(name, config, version):
    if not isinstance(config, dict):
        raise Refused(f"codec {name}: configuration {config!r}")
    if name == "blosc":
        return _blosc(config)
    if name == "zstd":
        return numcodecs.Zstd().decode
    if name == "gzip":
        return numcodecs.GZip().decode
    if name == "zlib" and version == 2:
        return numcodecs.Zlib().decode
    if name == "crc32c" and version == 3:
        def check(data):
            data = bytes(data)
            if len(data) < 4 or crc32c(data[:-4]) != int.from_bytes(data[-4:], "little"):
                raise Refused("crc32c")
            return data[:-4]
        return check
    raise Refused(f"codec {name!r}")


def _v2_codecs(meta, dtype):
    decoders = []
    filters = meta.get("filters")
    if filters is not None and not isinstance(filters, list):
        raise Refused("filters")
    for c in filters or []:
        if not isinstance(c, dict) or c.get("id") != "shuffle":
            raise Refused(f"filter {c!r}")
        size = c.get("elementsize", 4)
        if not _is_int(size) or size < 1:
            raise Refused("shuffle elementsize")
        decoders.append(numcodecs.Shuffle(size).decode)
    compressor = meta.get("compressor")
    if compressor is not None:
        if not isinstance(compressor, dict) or not isinstance(compressor.get("id"), str):
            raise Refused(f"compressor {compressor!r}")
        decoders.append(_bytes_to_bytes(compressor["id"], compressor, 2))
    return decoders[::-1]  # decoded from the last encoder back


def _decode(data, decoders):
    for d in decoders:
        try:
            data = d(data)
        except Refused:
            raise
        except Exception as e:  # numcodecs' own refusal of a damaged stream
            raise Refused(f"decoding: {e}")
    return bytes(data)


# ---- arrays ----

class _Layout:
    """What reading an array's chunks takes, either version."""

    def __init__(self):
        self.shape = self.chunks = self.dtype = self.fill = None
        self.decoders, self.key = [], None
        self.shard = None  # v3: (inner chunk shape, inner decoders)


def _shape(meta):
    if not isinstance(meta.get("shape"), list):
        raise Refused("shape")
    return _ints(meta["shape"], len(meta["shape"]), 0, "shape")


def _v2(meta):
    if meta.get("zarr_format") != 2:
        raise Refused("zarr_format")
    l = _Layout()
    l.shape = _shape(meta)
    n = len(l.shape)
    l.chunks = _ints(meta.get("chunks"), n, 1, "chunks")
    dtype = meta.get("dtype")
    if not isinstance(dtype, str) or len(dtype) != 3 or dtype[0] not in "<>|" or \
            dtype[1:] not in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8"):
        raise Refused(f"dtype {dtype!r}")
    if dtype[0] == "|" and dtype[2] != "1":
        raise Refused(f"dtype {dtype!r}")
    l.dtype = np.dtype(dtype)
    if meta.get("order", "C") != "C":
        raise Refused("order")
    sep = meta.get("dimension_separator", ".")
    if sep not in (".", "/"):
        raise Refused("dimension_separator")
    l.key = lambda idx: sep.join(map(str, idx)) if idx else "0"
    l.decoders = _v2_codecs(meta, l.dtype)
    l.fill = _fill(meta.get("fill_value"), l.dtype)
    return l


def _v3_chain(codecs):
    """v3's codecs: "bytes" (its endian), then bytes-to-bytes ones."""
    if not isinstance(codecs, list) or not codecs or not isinstance(codecs[0], dict) or \
            codecs[0].get("name") != "bytes":
        raise Refused("codecs: no bytes first")
    config = codecs[0].get("configuration", {})
    if not isinstance(config, dict):
        raise Refused("bytes configuration")
    endian = config.get("endian")
    decoders = []
    for c in codecs[1:]:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise Refused(f"codec {c!r}")
        decoders.append(_bytes_to_bytes(c["name"], c.get("configuration", {}), 3))
    return endian, decoders[::-1]


def _v3(meta):
    if meta.get("zarr_format") != 3 or meta.get("node_type") != "array":
        raise Refused("zarr_format or node_type")
    l = _Layout()
    l.shape = _shape(meta)
    n = len(l.shape)
    grid = meta.get("chunk_grid")
    if not isinstance(grid, dict) or grid.get("name") != "regular" or \
            not isinstance(grid.get("configuration"), dict):
        raise Refused("chunk_grid")
    l.chunks = _ints(grid["configuration"].get("chunk_shape"), n, 1, "chunk_shape")
    name = meta.get("data_type")
    if name not in _V3_TYPES:
        raise Refused(f"data_type {name!r}")
    keys = meta.get("chunk_key_encoding")
    if not isinstance(keys, dict) or keys.get("name") not in ("default", "v2"):
        raise Refused("chunk_key_encoding")
    kconf = keys.get("configuration", {})
    if not isinstance(kconf, dict):
        raise Refused("chunk_key_encoding configuration")
    default = keys["name"] == "default"
    sep = kconf.get("separator", "/" if default else ".")
    if sep not in ("/", "."):
        raise Refused("separator")
    l.key = (lambda idx: "c" + "".join(sep + str(i) for i in idx)) if default else \
        (lambda idx: sep.join(map(str, idx)) if idx else "0")
    codecs = meta.get("codecs")
    if isinstance(codecs, list) and len(codecs) == 1 and isinstance(codecs[0], dict) and \
            codecs[0].get("name") == "sharding_indexed":
        c = codecs[0].get("configuration")
        if not isinstance(c, dict) or c.get("index_location", "end") != "end":
            raise Refused("sharding configuration")
        inner = _ints(c.get("chunk_shape"), n, 1, "inner chunk_shape")
        if any(s % i for s, i in zip(l.chunks, inner)):
            raise Refused("shards not whole inner chunks")
        index = c.get("index_codecs")
        if not isinstance(index, list) or len(index) != 2 or \
                not all(isinstance(x, dict) for x in index) or \
                [x.get("name") for x in index] != ["bytes", "crc32c"] or \
                (index[0].get("configuration") or {}).get("endian", "little") != "little":
            raise Refused("index_codecs")
        endian, decoders = _v3_chain(c.get("codecs"))
        l.shard = (inner, decoders)
    else:
        endian, l.decoders = _v3_chain(codecs)
    size = int(_V3_TYPES[name][1])
    if size > 1 and endian not in ("little", "big"):
        raise Refused(f"endian {endian!r}")
    l.dtype = np.dtype(("<" if size == 1 or endian == "little" else ">") + _V3_TYPES[name])
    if "fill_value" not in meta:
        raise Refused("no fill_value")
    l.fill = _fill(meta["fill_value"], l.dtype)
    if l.fill is None:
        raise Refused("fill_value null")
    return l


def _whole(data, chunk, dtype, why):
    if len(data) != math.prod(chunk) * dtype.itemsize:
        raise Refused(f"{why}: {len(data)} bytes")
    return np.frombuffer(data, dtype).reshape(chunk)


def _read_shard(path, l, origin, out):
    inner, decoders = l.shard
    per = [s // i for s, i in zip(l.chunks, inner)]
    count = math.prod(per)
    with open(path, "rb") as f:
        data = f.read()
    index_bytes = 16 * count + 4
    if len(data) < index_bytes:
        raise Refused("shard shorter than its index")
    index = data[-index_bytes:]
    if crc32c(index[:-4]) != int.from_bytes(index[-4:], "little"):
        raise Refused("shard index crc32c")
    body = len(data) - index_bytes
    for k in range(count):
        at, length = struct.unpack_from("<QQ", index, 16 * k)
        if at == length == 2 ** 64 - 1:
            continue
        if at > body or length > body - at:
            raise Refused("inner chunk outside its shard")
        q = np.unravel_index(k, per)
        corner = [o + j * i for o, j, i in zip(origin, q, inner)]
        if any(c >= s for c, s in zip(corner, out.shape)):
            continue  # wholly past the array's end: never read
        values = _whole(_decode(data[at:at + length], decoders), inner, l.dtype, "inner chunk")
        _place(out, values, corner)


def _place(out, values, corner):
    region = tuple(slice(c, min(c + v, s)) for c, v, s in zip(corner, values.shape, out.shape))
    if all(r.start < r.stop for r in region):
        out[region] = values[tuple(slice(0, r.stop - r.start) for r in region)]


def read_array(path):
    """The values of the array at `path` (a directory), its axis names
    (None where not named) and attributes."""
    v3 = _load(os.path.join(path, "zarr.json"))
    if v3 is not None:
        l = _v3(v3)
        attrs = v3.get("attributes", {})
        dims = v3.get("dimension_names")
    else:
        meta = _load(os.path.join(path, ".zarray"))
        if meta is None:
            raise Refused("no array")
        l = _v2(meta)
        attrs = _load(os.path.join(path, ".zattrs")) or {}
        dims = attrs.pop("_ARRAY_DIMENSIONS", None)
    if not isinstance(attrs, dict):
        raise Refused("attributes")
    if dims is not None and (not isinstance(dims, list) or len(dims) != len(l.shape) or
                             not all(isinstance(d, str) and d for d in dims)):
        raise Refused("dimension names")
    if math.prod(l.shape) > MOST_VALUES or math.prod(l.chunks) > MOST_VALUES:
        raise Refused("large")
    out = np.full(l.shape, l.fill if l.fill is not None else 0, l.dtype)
    grid = [-(-s // c) for s, c in zip(l.shape, l.chunks)]
    if math.prod(grid) > MOST_VALUES:
        raise Refused("large")
    for idx in np.ndindex(*grid):
        chunk_path = os.path.join(path, *l.key(idx).split("/"))
        corner = [i * c for i, c in zip(idx, l.chunks)]
        if not os.path.isfile(chunk_path):
            continue
        if l.shard:
            _read_shard(chunk_path, l, corner, out)
            continue
        with open(chunk_path, "rb") as f:
            data = f.read()
        _place(out, _whole(_decode(data, l.decoders), l.chunks, l.dtype, "chunk"), corner)
    return Array(out, dims, attrs)


def read_store(path):
    """{name: Array} of the group at `path` (v2 or v3), its arrays only."""
    v3 = _load(os.path.join(path, "zarr.json"))
    if v3 is None:
        group = _load(os.path.join(path, ".zgroup"))
        if group is None or group.get("zarr_format") != 2:
            raise Refused("no v2 group")
    if v3 is not None and (v3.get("zarr_format") != 3 or v3.get("node_type") != "group"):
        raise Refused("not a group")
    arrays = {}
    for name in sorted(os.listdir(path)):
        child = os.path.join(path, name)
        if name.startswith(".") or not os.path.isdir(child):
            continue
        if os.path.exists(os.path.join(child, ".zgroup")):
            raise Refused("a group inside")
        inner = _load(os.path.join(child, "zarr.json"))
        if inner is not None and inner.get("node_type") == "group":
            raise Refused("a group inside")
        if inner is None and not os.path.exists(os.path.join(child, ".zarray")):
            continue
        arrays[name] = read_array(child)
    return arrays


# ---- v3 stores made by hand ----

def _encoders(codecs):
    out = []
    for c in codecs:
        if c["name"] == "blosc":
            conf = c["configuration"]
            shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[conf.get("shuffle", "noshuffle")]
            out.append(numcodecs.Blosc(conf["cname"], conf.get("clevel", 5), shuffle).encode)
        elif c["name"] == "zstd":
            out.append(numcodecs.Zstd(c["configuration"].get("level", 1)).encode)
        elif c["name"] == "gzip":
            out.append(numcodecs.GZip(c["configuration"].get("level", 1)).encode)
        elif c["name"] == "crc32c":
            out.append(lambda b: bytes(b) + crc32c(bytes(b)).to_bytes(4, "little"))
        else:
            raise ValueError(c["name"])
    return out


def _encode(values, endian, codecs):
    data = values.astype(values.dtype.newbyteorder("<" if endian == "little" else ">")).tobytes()
    for e in _encoders(codecs):
        data = bytes(e(data))
    return data


def write_group_v3(path, attributes=None):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": attributes or {}}, f)


def _fill_json(fill, dtype):
    if dtype.kind == "f":
        if np.isnan(fill):
            return "NaN"
        if np.isinf(fill):
            return "Infinity" if fill > 0 else "-Infinity"
        return float(fill)
    return int(fill)


def write_v3(store, name, values, chunks, dims=None, endian="little", codecs=(), fill=0,
             shards=None, missing=(), attributes=None):
    """Array `name` of the v3 group `store`: `values` (numpy) in `chunks`
    (or in shards of `shards` values of inner chunks of `chunks`), each
    chunk encoded by "bytes" (`endian`) then `codecs` (v3's JSON
    objects); chunks whose index is in `missing` (or, sharded, inner
    chunks) left out, to read as `fill`."""
    path = os.path.join(store, name)
    os.makedirs(path, exist_ok=True)
    dtype = values.dtype
    type_name = {v: k for k, v in _V3_TYPES.items()}[dtype.kind + str(dtype.itemsize)]
    chain = [{"name": "bytes", "configuration": {"endian": endian}}, *codecs]
    grid_chunks = shards or chunks
    meta = {"zarr_format": 3, "node_type": "array", "shape": list(values.shape),
            "data_type": type_name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid_chunks)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": _fill_json(fill, dtype), "attributes": attributes or {}}
    if dims:
        meta["dimension_names"] = list(dims)
    if shards:
        meta["codecs"] = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunks), "codecs": chain, "index_location": "end",
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}]}}]
    else:
        meta["codecs"] = chain
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump(meta, f)
    padded_shape = [-(-s // c) * c for s, c in zip(values.shape, grid_chunks)]
    padded = np.full(padded_shape, fill, dtype)
    padded[tuple(slice(0, s) for s in values.shape)] = values
    grid = [p // c for p, c in zip(padded_shape, grid_chunks)]
    for idx in np.ndindex(*grid):
        corner = [i * c for i, c in zip(idx, grid_chunks)]
        block = padded[tuple(slice(o, o + c) for o, c in zip(corner, grid_chunks))]
        key = "c" + "".join("/" + str(i) for i in idx)
        if shards:
            per = [s // c for s, c in zip(shards, chunks)]
            body, entries = b"", []
            for k, q in enumerate(np.ndindex(*per)):
                if (idx, k) in missing:
                    entries.append((2 ** 64 - 1, 2 ** 64 - 1))
                    continue
                inner = block[tuple(slice(j * c, (j + 1) * c) for j, c in zip(q, chunks))]
                data = _encode(inner, endian, codecs)
                entries.append((len(body), len(data)))
                body += data
            if all(e == (2 ** 64 - 1, 2 ** 64 - 1) for e in entries):
                continue
            index = b"".join(struct.pack("<QQ", *e) for e in entries)
            data = body + index + crc32c(index).to_bytes(4, "little")
        else:
            if idx in missing:
                continue
            data = _encode(block, endian, codecs)
        chunk_path = os.path.join(path, *key.split("/"))
        os.makedirs(os.path.dirname(chunk_path), exist_ok=True)
        with open(chunk_path, "wb") as f:
            f.write(data)
    return path
