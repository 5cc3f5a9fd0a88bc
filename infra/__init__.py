"""The Pulumi program (`pulumi up`, `python -m infra`), its offline plan (`python -m infra.plan`)
and the GPU catalog refresh (`python -m infra.catalog_refresh`)."""
