#!/usr/bin/python3
"""Writes the CF-style netCDF-4 file of issue 24's benchmark, as
netCDF4-python writes such files: tas(time, lat, lon) float32, one record
per chunk, zlib 4 + shuffle, a _FillValue; tas_stn(time, station);
time_bnds; a 2-D char station_name; a scalar crs; 6 global attributes;
time unlimited; with a 5th argument "tas,pr", pr(time, lat, lon) too
(precipitation: the same storage, skewed positive values).
    make_climate.py OUT.nc [TIMES [LATS [LONS [VARIABLES]]]]   (default 1461 192 288 tas:
    323 MB of tas)
Values are smooth fields plus noise, so that they compress as model output
does (not zeros)."""
import sys

import netCDF4
import numpy as np

path = sys.argv[1]
times, lats, lons = (int(a) for a in (sys.argv[2:5] + ["1461", "192", "288"][len(sys.argv[2:5]):]))
with_pr = len(sys.argv) > 5 and "pr" in sys.argv[5].split(",")
stations = 50
rng = np.random.default_rng(24)
with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
    nc.title = "xpose benchmark: daily near-surface air temperature"
    nc.institution = "xpose"
    nc.source = "tests/bench/make_climate.py"
    nc.Conventions = "CF-1.8"
    nc.history = "created by make_climate.py"
    nc.references = "issue 24"
    nc.createDimension("time", None)
    nc.createDimension("lat", lats)
    nc.createDimension("lon", lons)
    nc.createDimension("bnds", 2)
    nc.createDimension("station", stations)
    nc.createDimension("name_strlen", 16)
    time = nc.createVariable("time", "f8", ("time",))
    time.units = "days since 2000-01-01"
    time.calendar = "standard"
    time.bounds = "time_bnds"
    bnds = nc.createVariable("time_bnds", "f8", ("time", "bnds"))
    lat = nc.createVariable("lat", "f4", ("lat",))
    lat.units = "degrees_north"
    lat[:] = np.linspace(-90, 90, lats)
    lon = nc.createVariable("lon", "f4", ("lon",))
    lon.units = "degrees_east"
    lon[:] = np.linspace(0, 360, lons, endpoint=False)
    crs = nc.createVariable("crs", "i4", ())
    crs.grid_mapping_name = "latitude_longitude"
    tas = nc.createVariable("tas", "f4", ("time", "lat", "lon"), zlib=True, complevel=4,
                            shuffle=True, chunksizes=(1, lats, lons), fill_value=np.float32(1e20))
    tas.units = "K"
    tas.standard_name = "air_temperature"
    tas.grid_mapping = "crs"
    tas.coordinates = "lat lon"
    if with_pr:
        pr = nc.createVariable("pr", "f4", ("time", "lat", "lon"), zlib=True, complevel=4,
                               shuffle=True, chunksizes=(1, lats, lons),
                               fill_value=np.float32(1e20))
        pr.units = "kg m-2 s-1"
        pr.standard_name = "precipitation_flux"
        pr.grid_mapping = "crs"
        pr.coordinates = "lat lon"
    stn = nc.createVariable("tas_stn", "f4", ("time", "station"), fill_value=np.float32(1e20))
    stn.units = "K"
    name = nc.createVariable("station_name", "S1", ("station", "name_strlen"))
    name[:] = netCDF4.stringtochar(np.array([f"station {i:03d}" for i in range(stations)], "S16"))
    field = (250 + 40 * np.cos(np.radians(lat[:]))[:, None] + np.zeros((1, lons))).astype("f4")
    for t in range(times):
        time[t] = t
        bnds[t] = [t, t + 1]
        tas[t] = field + 5 * np.sin(2 * np.pi * t / 365.25) + rng.normal(0, 1, (lats, lons)).astype("f4")
        stn[t] = 280 + rng.normal(0, 3, stations).astype("f4")
        if with_pr:
            pr[t] = (rng.gamma(0.5, 2e-5, (lats, lons)) * (rng.random((lats, lons)) < 0.4)).astype("f4")
