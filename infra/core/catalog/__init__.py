"""The vendored GPU catalog: which GPUs, machine and instance types exist where, with shapes and prices.

`vendored` reads the CSV files under `infra/core/data/` (each parsed once per process, for every
reader); `pricing` answers the catalog's prices (``Catalog.prices``); `pins` the upstream versions
the plan emits (``pins.csv``); `build` turns live Compute API listings into those files (used by
`infra.catalog_refresh`); `shapes` overlays the user's declared ``gpuPools[].shape`` for types the
catalog lacks; `prices` checks the catalog's prices against the clouds' price APIs. May import
only `errors` and the standard library.
"""
