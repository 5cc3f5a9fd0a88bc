"""The vendored GPU catalog: which GPUs, machine and instance types exist where, with shapes and prices.

`vendored` reads the CSV files under `infra/core/data/`; `build` turns live Compute API listings into
those files (used by `infra.catalog_refresh`); `shapes` overlays the user's declared
``gpuPools[].shape`` for types the catalog lacks. May import only `errors` and the standard library.
"""
