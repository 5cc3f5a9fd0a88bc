"""The quota check's cloud side: read limits and usage, file increase requests (GCP, AWS)."""
