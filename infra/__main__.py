"""Pulumi entry point (``main: infra/``): no resources at import time, just run the program."""

from infra.program import run

run()
