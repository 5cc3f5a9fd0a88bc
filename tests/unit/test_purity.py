"""infra.core (and the pure quota modules) import no Pulumi and no cloud SDK."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import infra.core
from tests.conftest import python_c

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = (
    "pulumi",
    "pulumi_gcp",
    "pulumi_aws",
    "pulumi_kubernetes",
    "pulumi_eks",
    "boto3",
    "botocore",
    "google",
)


def pure_modules() -> list[str]:
    # Every module of every subpackage (gke/, eks/, config/, ...), not only the top level.
    mods = [m.name for m in pkgutil.walk_packages(infra.core.__path__, "infra.core.")]
    for name in ("demand", "arithmetic", "report"):
        if (ROOT / "quota" / f"{name}.py").exists():
            mods.append(f"quota.{name}")
    return mods


def test_pure_modules_import_with_pulumi_and_cloud_sdks_blocked():
    code = (
        "import sys\n"
        f"for m in {BLOCKED!r}: sys.modules[m] = None\n"
        f"for m in {pure_modules()!r}: __import__(m)\n"
        "print('ok')\n"
    )
    out = python_c(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_blocking_really_blocks():
    """Guard for the test above: a blocked import must fail, or the test could never fail."""
    code = "import sys\nsys.modules['pulumi'] = None\nimport pulumi\n"
    out = python_c(code)
    assert out.returncode != 0
