#!/usr/bin/python3
"""An hourly year of CF tas(time, lat, lon), float32, shuffle + zlib 4, one record
a chunk, time unlimited, as climate archives store it (issue 55's benchmark):
    make_year.py OUT.nc TIMES LATS LONS [--skeleton FILE]
The file's structure is made by netCDF4-python, or copied from --skeleton (one
made so, for machines without netCDF4-python); its records are quantized
smooth fields plus noise, each shuffled and deflated in a process pool and
written with write_direct_chunk."""
import os
import shutil
import sys
import zlib
from multiprocessing import Pool

import h5py
import numpy as np


def skeleton(path, T, Y, X):
    import netCDF4
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.Conventions = "CF-1.8"
        nc.title = "hourly near-surface air temperature"
        nc.history = "made by make_year.py"
        nc.createDimension("time", None)
        nc.createDimension("lat", Y)
        nc.createDimension("lon", X)
        nc.createDimension("bnds", 2)
        t = nc.createVariable("time", "f8", ("time",))
        t.units, t.bounds = "hours since 2000-01-01", "time_bnds"
        b = nc.createVariable("time_bnds", "f8", ("time", "bnds"))
        la = nc.createVariable("lat", "f4", ("lat",))
        la.units, la[:] = "degrees_north", np.linspace(-90, 90, Y)
        lo = nc.createVariable("lon", "f4", ("lon",))
        lo.units, lo[:] = "degrees_east", np.linspace(0, 360, X, endpoint=False)
        v = nc.createVariable("tas", "f4", ("time", "lat", "lon"), zlib=True, complevel=4,
                              shuffle=True, chunksizes=(1, Y, X), fill_value=np.float32(1e20))
        v.units, v.standard_name = "K", "air_temperature"
        t[:] = np.arange(T)
        b[:] = np.stack([np.arange(T), np.arange(T) + 1], 1)
        v[T - 1] = np.full((Y, X), 280, "f4")


def record(args):
    t, Y, X = args
    lat = np.radians(np.linspace(-90, 90, Y))[:, None]
    lon = np.radians(np.linspace(0, 360, X, endpoint=False))[None, :]
    rng = np.random.default_rng(t)
    f = (250 + 40 * np.cos(lat) + 5 * np.sin(2 * np.pi * t / 8766) +
         3 * np.cos(lon + 2 * np.pi * t / 24) + rng.normal(0, 0.5, (Y, X)))
    f = (np.round(f * 64) / 64).astype("<f4")
    return t, zlib.compress(f.view(np.uint8).reshape(-1, 4).T.tobytes(), 4)


def main():
    path, T, Y, X = sys.argv[1], *map(int, sys.argv[2:5])
    if "--skeleton" in sys.argv:
        shutil.copyfile(sys.argv[sys.argv.index("--skeleton") + 1], path)
    else:
        skeleton(path, T, Y, X)
    with h5py.File(path, "r+") as h:
        d = h["tas"]
        assert d.shape == (T, Y, X), (d.shape, (T, Y, X))
        with Pool(os.cpu_count()) as pool:
            for t, data in pool.imap(record, ((t, Y, X) for t in range(T)), chunksize=64):
                d.id.write_direct_chunk((t, 0, 0), data, 0)


if __name__ == "__main__":
    main()
