"""JupyterHub profiles of every sample stack: what the spawner form shows and what it requests."""

from __future__ import annotations

import ast
import copy
import functools
import re
from pathlib import Path
from typing import Any

import pytest

from infra.core.config.stack import load_stack_file, parse, parse_file
from infra.core.integrations.jupyterhub import notebook_share
from infra.core.plan import build_plan

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))
IDS = [p.stem.removeprefix("Pulumi.") for p in STACKS]


@functools.cache
def profiles(path: Path) -> dict[str, dict[str, Any]]:
    op = build_plan(parse_file(path)).operator
    assert op is not None
    return {k: dict(v) for k, v in op.jupyterhub_profiles.items()}


def test_the_gpu_request_rule_has_one_home_used_by_jupyterhub_and_warm():
    # One home per concern: the slot rule is defined once, and both consumers import it.
    core = ROOT / "infra" / "core"
    homes = [
        p.relative_to(ROOT).as_posix()
        for p in core.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name in ("gpu_request", "shares_gpu")
    ]
    assert homes == ["infra/core/integrations/scheduling.py"] * 2
    for user in ("integrations/jupyterhub.py", "warm.py"):
        assert "from infra.core.integrations.scheduling import gpu_request" in (
            (core / user).read_text()
        )


# KubeSpawner picks the profile whose slug matches the form's choice, the first one
# (jupyterhub/kubespawner kubespawner/spawner.py ``_get_profile``), and fills a missing slug with
# ``slugify(display_name)``: a slug is unique in its list and already slugify's form.
SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


@pytest.mark.parametrize("path", STACKS, ids=IDS)
def test_profile_display_names_and_slugs_are_unique_in_every_sample_profile_list(path: Path):
    listed = list(profiles(path).values())
    names = [p["display_name"] for p in listed]
    slugs = [p["slug"] for p in listed]
    assert len(set(names)) == len(names), names
    assert len(set(slugs)) == len(slugs), slugs
    assert all(SLUG.fullmatch(s) for s in slugs), slugs


def test_on_demand_and_spot_pools_of_one_shape_are_told_apart_by_display_name():
    listed = profiles(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml")
    assert listed["gpu-t4"]["display_name"].endswith(" - gpu-t4")
    assert listed["gpu-t4-spot"]["display_name"].endswith(" - gpu-t4-spot (Spot)")


def _mib(quantity: str) -> int:
    # KubeSpawner's M is MiB: JupyterHub ByteSpecification (jupyterhub/traitlets.py).
    assert quantity.endswith("M")
    return int(quantity[:-1])


@pytest.mark.parametrize("path", STACKS, ids=IDS)
def test_profile_display_figures_equal_the_kubespawner_override_guarantees(path: Path):
    op = build_plan(parse_file(path)).operator
    assert op is not None
    for name, profile in op.jupyterhub_profiles.items():
        o, hints = profile["kubespawner_override"], op.scheduling.get(name)
        shown = profile["display_name"]
        gib = _mib(o["mem_guarantee"]) / 1024
        assert f", {gib:.1f} GiB RAM, " in shown, shown
        (count,) = o["extra_resource_limits"].values()
        slots = re.search(r"vCPUs shared by (\d+) ", shown)
        if hints is not None and slots:
            assert int(slots.group(1)) == int(hints["slotsPerNode"])
        if slots:
            # A shared slot: one unit of the resource, and the GPU part named.
            assert count == "1"
            assert re.search(r"MIG slice|time-s\w+ \d+ ways", shown), shown
        else:
            assert shown.startswith(f"{count}x NVIDIA "), shown


def test_gke_mig_slot_profile_states_the_slice_and_memory_share_not_the_node():
    (profile,) = profiles(ROOT / "stacks" / "Pulumi.gke-a100-mig.yaml").values()
    assert profile["kubespawner_override"]["mem_guarantee"] == "5494M"
    assert profile["display_name"] == (
        "1g.5gb MIG slice of an NVIDIA A100-40GB time-shared 2 ways, 5.4 GiB RAM,"
        " 12 vCPUs shared by 14 - a100-mig"
    )


def test_operator_mig_and_time_sliced_profiles_state_their_slice():
    listed = profiles(ROOT / "stacks" / "Pulumi.onprem-k3s-timeslicing.yaml")
    assert listed["a10-shared"]["display_name"].startswith("An NVIDIA A10 time-sliced 4 ways, ")
    assert listed["a100-mig"]["display_name"].startswith("1g.5gb MIG slice of an NVIDIA A100-40GB,")


def _variant(name: str, pool: str, **changes: Any) -> dict[str, dict[str, Any]]:
    stack_name, raw = load_stack_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")
    raw = copy.deepcopy(raw)
    entry = next(p for p in raw["gpu-infra:gpuPools"] if p["name"] == pool)
    entry.update(changes)
    op = build_plan(parse(raw, stack_name)).operator
    assert op is not None
    return {k: dict(v) for k, v in op.jupyterhub_profiles.items()}


def test_gke_mps_slot_profile_names_mps_sharing():
    gpu = {"partitionSize": "1g.5gb", "sharing": {"strategy": "mps", "maxSharedClientsPerGpu": 3}}
    listed = _variant("gke-a100-mig", "a100-mig", gpu=gpu)
    assert listed["a100-mig"]["display_name"].startswith(
        "1g.5gb MIG slice of an NVIDIA A100-40GB MPS-shared 3 ways, "
    )
    assert " 12 vCPUs shared by 21 - a100-mig" in listed["a100-mig"]["display_name"]


def test_operator_mixed_mig_slot_names_the_slice_of_its_resource():
    # Mixed strategy: the slot's resource (nvidia.com/mig-<profile>) names the slice, not the
    # layout name (all-balanced).
    plan = build_plan(parse_file(ROOT / "stacks" / "Pulumi.onprem-k3s-timeslicing.yaml"))
    assert plan.operator is not None
    (h,) = (p for p in plan.pools if p.name == "a100-mig")
    hints = {
        **plan.operator.scheduling["a100-mig"],
        "migStrategy": "mixed",
        "migConfig": "all-balanced",
        "resourceName": "nvidia.com/mig-2g.10gb",
    }
    share = notebook_share(h, hints)
    assert share.gpu == "2g.10gb MIG slice of an NVIDIA A100-40GB"
