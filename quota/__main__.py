"""``python -m quota`` is ``python -m quota.check``."""

from infra.cli import run
from quota.check import main

run(main)
