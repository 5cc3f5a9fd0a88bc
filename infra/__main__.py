"""Pulumi entry point (``main: infra/`` in Pulumi.yaml): no resources at import time, just run.

``pulumi up`` / ``pulumi preview`` run this file inside the Pulumi engine. Run by hand
(``python -m infra``), it prints how to use the project instead of failing.
"""

import sys

USAGE = """\
usage: pulumi up --stack NAME        (the Pulumi engine runs this program: main: infra/)
       python -m infra.plan --stack NAME [--json | --diff OLD | --export DIR | --helm-values]
       python -m quota.check --stack NAME [--offline | --request]
       python -m infra.catalog_refresh [--cloud gcp|aws]

gpu-infra is a Pulumi program: `python -m infra` does nothing by itself. Use the commands above;
each has --help with examples and exit codes.

examples:
  pulumi login --local && pulumi stack init gke-t4 && pulumi up --stack gke-t4
  python -m infra.plan --stack gke-t4            # what pulumi up would create, offline

exit codes (python -m infra): 0 after printing this help; 2 when run outside the Pulumi engine.
"""


def _under_engine() -> bool:
    """The Pulumi language host has configured a resource monitor for this process."""
    settings = sys.modules.get("pulumi.runtime.settings")
    return settings is not None and settings.get_monitor() is not None


if _under_engine():
    from infra.cli import short_lived_process
    from infra.program import run

    short_lived_process()  # a deploy builds one object graph and exits (infra.cli.short_lived)
    run()
else:
    wants_help = any(a in ("-h", "--help") for a in sys.argv[1:])
    (sys.stdout if wants_help else sys.stderr).write(USAGE)
    sys.exit(0 if wants_help else 2)
