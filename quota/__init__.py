"""The quota preflight, `python -m quota.check`: demand and arithmetic in pure code, thin cloud
clients."""
