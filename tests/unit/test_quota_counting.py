"""What the clouds count (pure): vCPU-free families, surge, reservations, service limits."""

from __future__ import annotations

import pytest

from infra.core.catalog.vendored import read_rows
from quota import demand as d
from quota.rules import PROVISIONING_RULES, draws_vcpu_quota, gcp_cpu_rules, gcp_machine_family


def _catalog_families() -> list[str]:
    """Every machine family the catalog or the vCPU table names."""
    fams = {gcp_machine_family(r["machine_type"]) for r in read_rows("gcp_machine_types.csv")}
    fams |= {gcp_machine_family(r["machine_type"]) for r in read_rows("gcp_n1_machine_types.csv")}
    return sorted(fams | set(gcp_cpu_rules()))


@pytest.mark.parametrize("family", _catalog_families())
@pytest.mark.parametrize("model", sorted(PROVISIONING_RULES))
def test_families_without_vcpu_quota_draw_none_regionally_or_globally(
    family: str, model: str
) -> None:
    # https://cloud.google.com/compute/resource-usage#gpu_quota: "You don't need to request CPU
    # quotas" for A4X Max, A4X, A4, A3, G4 and G2 VMs: neither a regional nor CPUS_ALL_REGIONS.
    assert family in gcp_cpu_rules(), f"catalog family {family} has no vCPU quota row"
    pool = d.NodeGroupSizing(
        path="gpuPools[0]",
        name="p",
        machine_types=(f"{family}-standard-8",),
        gpu_type=None,
        gpus_per_node=0,
        vcpus=8,
        model=model,  # type: ignore[arg-type]
        max_nodes=4,
        surge=1,
    )
    demand = d.gcp_contributions("us-central1", [pool])
    draws = [x for c in demand.contributions for x in c.draw.chain()]
    vcpu = [x.key for x in draws if x.key.unit == "vCPUs"]
    if not draws_vcpu_quota(family):
        assert vcpu == []
        assert all(r.key.unit != "vCPUs" for r in demand.rows())
    elif model != "reservation":  # a specific reservation already holds its vCPUs
        assert any(k.scope == "region" for k in vcpu)
        assert any(k.quota == d.CPUS_ALL_REGIONS for k in vcpu)
