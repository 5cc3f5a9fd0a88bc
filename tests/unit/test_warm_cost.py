"""Warm nodes in cost, quota and the plan table: counted at minimum as running nodes, the peak
unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from infra.core.catalog.vendored import Catalog
from infra.core.cost import Cost, PoolCost, estimate
from infra.core.plan import Plan
from infra.planview.table import pool_rows, print_pools, print_totals
from quota.arithmetic import Reading
from quota.demand import stack_demand
from quota.report import Check
from tests.unit.warm_fixtures import sample, warm_sample

# --------------------------------------------------------------------------------------------------
# Cost, quota and the plan table count warm nodes as running nodes


def test_cost_at_minimum_pays_for_warm_nodes_and_at_maximum_is_unchanged():
    cold, hot = estimate(sample("gke-t4")), estimate(warm_sample("gke-t4"))
    (p,) = hot.pools
    assert (p.warm, p.idle_nodes) == (1, 1)
    assert p.per_node is not None and cold.at_min is not None and hot.at_min is not None
    assert hot.at_min - cold.at_min == pytest.approx(p.per_node)
    assert hot.at_max == cold.at_max
    assert hot.to_json()["pools"]["gpu-t4"]["warmNodes"] == 1
    assert cold.to_json()["pools"]["gpu-t4"]["warmNodes"] == 0


def test_boot_disks_and_public_addresses_at_minimum_count_warm_nodes():
    def line(cost: Any, prefix: str) -> Any:
        return next(x for x in cost.lines if x.item.startswith(prefix))

    cold, hot = estimate(sample("gke-t4")), estimate(warm_sample("gke-t4"))
    disk = line(hot, "boot disks").at_min - line(cold, "boot disks").at_min
    assert disk == pytest.approx(100 * 0.10 / 730)  # one 100 GB pd-balanced disk
    ip = line(hot, "external IPv4").at_min - line(cold, "external IPv4").at_min
    assert ip == pytest.approx(0.005)
    eks_cold, eks_hot = estimate(sample("eks-g4dn")), estimate(warm_sample("eks-g4dn"))
    assert line(eks_hot, "boot disks").at_min > line(eks_cold, "boot disks").at_min


def test_warm_at_or_below_min_nodes_adds_nothing_at_minimum():
    p = PoolCost("p", 1.0, 2, 5, warm=1)
    assert p.idle_nodes == 2
    assert Cost((p,), None, "x").at_min == pytest.approx(2.0)


def _rows(plan: Plan) -> dict[str, Any]:
    return {r.key.quota: r for r in stack_demand(plan.config, Catalog.load(), plan)[1]}


def test_quota_needed_at_minimum_counts_warm_nodes_and_the_peak_is_unchanged():
    cold, hot = _rows(sample("gke-t4")), _rows(warm_sample("gke-t4"))
    t4 = "NVIDIA_T4_GPUS"
    assert (cold[t4].at_min, hot[t4].at_min) == (0, 1)
    assert cold[t4].needed == hot[t4].needed
    assert any("1 of them warm" in why for why in hot[t4].pools)
    row = Check.judged(hot[t4], Reading(None, None, "offline")).as_json()
    assert row["neededAtMinimum"] == 1 and row["needed"] == hot[t4].needed  # extended, not renamed


def test_eks_quota_at_minimum_counts_each_warm_nodes_vcpus():
    hot = warm_sample("eks-g4dn")
    rows = stack_demand(hot.config, Catalog.load(), hot)[1]
    gpu_rows = [r for r in rows if any("warm" in why for why in r.pools)]
    assert gpu_rows and all(r.at_min >= 4 for r in gpu_rows)  # g4dn.xlarge: 4 vCPUs a node


def _limit_rows(plan: Plan) -> dict[str, Any]:
    from quota.demand import stack_contributions
    from quota.limits import stack_limits

    demand = stack_contributions(plan.config, Catalog.load(), plan)
    sizings = list(dict.fromkeys(c.pool for c in demand.contributions))
    rows = stack_limits(demand.cloud, plan, plan.config.region, sizings).rows
    return {r.key.quota: r for r in rows}


def test_node_count_limit_rows_count_warm_nodes_at_minimum_as_the_instance_rows_do():
    cold, hot = _limit_rows(sample("gke-t4")), _limit_rows(warm_sample("gke-t4"))
    assert set(cold) == set(hot) and len(hot) == 2
    cluster, zone = "GKE_NODES_PER_CLUSTER", "GKE_NODES_PER_POOL_ZONE"
    assert hot[cluster].at_min == cold[cluster].at_min + 1  # the one warm T4 node
    assert hot[zone].at_min >= max(1, cold[zone].at_min)  # the largest pool zone's, warm included
    assert all(hot[q].needed == cold[q].needed for q in hot)
    eks = _limit_rows(warm_sample("eks-g4dn"))
    per_group = eks["L-BD136A63"]
    assert 1 <= per_group.at_min <= per_group.needed
    assert all(r.at_min <= r.needed for r in eks.values())


def test_plan_table_shows_warm_nodes_in_the_nodes_cell_and_counts_them_at_minimum():
    plan = warm_sample("gke-t4")
    rows = pool_rows(plan)
    lines: list[str] = []
    print_pools(plan, estimate(plan), rows, lines.append)
    print_totals(rows, lines.append)
    text = "\n".join(lines)
    assert "0-20 (1 warm)" in text
    assert "1 GPU nodes at minimum (warm nodes included: 1)" in text
    cold: list[str] = []
    print_totals(pool_rows(sample("gke-t4")), cold.append)
    assert "0 GPU nodes at minimum" in cold[0] and "warm" not in cold[0]
