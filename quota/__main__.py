"""``python -m quota`` is ``python -m quota.check``."""

from infra.cli import run, short_lived
from quota.check import main

with short_lived():  # no collector sweeps, no plugin scan (infra.cli.short_lived)
    run(main)
