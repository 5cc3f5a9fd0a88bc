"""``python -m quota`` is ``python -m quota.check``."""

from infra.cli import quiet_gc, run
from quota.check import main

with quiet_gc():  # a short-lived CLI: collector sweeps are waste (infra.cli.quiet_gc)
    run(main)
