"""What the clouds count (pure): vCPU-free families, surge, reservations, service limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.core.catalog.vendored import DATA_DIR, Catalog, read_rows
from infra.core.config.stack import parse, parse_file
from infra.core.gke.capacity import gke_created
from infra.core.plan import build_plan
from quota import demand as d
from quota.rules import PROVISIONING_RULES, draws_vcpu_quota, gcp_cpu_rules, gcp_machine_family
from tests.conftest import gke_config


def _catalog_families() -> list[str]:
    """Every machine family the catalog or the vCPU table names."""
    fams = {
        gcp_machine_family(r["machine_type"]) for r in read_rows("gcp_machine_types.csv", DATA_DIR)
    }
    fams |= {
        gcp_machine_family(r["machine_type"])
        for r in read_rows("gcp_n1_machine_types.csv", DATA_DIR)
    }
    return sorted(fams | set(gcp_cpu_rules()))


# https://cloud.google.com/compute/resource-usage#gpu_quota: "To create A4X Max, A4X, A4, A3, G4,
# and G2 VMs, you only need to have the required ... GPU quotas ... You don't need to request CPU
# quotas". Written out here, not derived from the code under test.
NO_VCPU_QUOTA = frozenset({"a3", "a4", "a4x", "g2", "g4"})


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
    assert draws_vcpu_quota(family) == (family not in NO_VCPU_QUOTA)
    if family in NO_VCPU_QUOTA:
        assert vcpu == []
        assert all(r.key.unit != "vCPUs" for r in demand.rows())
    elif model != "reservation":  # a specific reservation already holds its vCPUs
        assert any(k.scope == "region" for k in vcpu)
        assert any(k.quota == d.CPUS_ALL_REGIONS for k in vcpu)


ROOT = Path(__file__).resolve().parents[2]


def _stack(name: str) -> d.Demand:
    config = parse_file(ROOT / "stacks" / f"Pulumi.{name}.yaml")
    return d.stack_contributions(config, Catalog.load(), build_plan(config))


def test_eks_hpc_p_class_demand_adds_no_surge_for_groups_updating_minimal() -> None:
    # h100-efa (max 4), h200-odcr (2), b200-block (2): 192 vCPUs each, one AZ each; hpc, an
    # ODCR and a Capacity Block all update with updateStrategy MINIMAL (terminate first), so no
    # group surges.
    rows = {r.key.quota: r for r in _stack("eks-hpc").rows()}
    p = rows["L-417A185B"]
    assert p.needed == 192 * (4 + 2 + 2)


def test_group_per_zone_surges_per_node_group() -> None:
    # eks-zonal-spot: a10g (on demand, max 6) makes one node group per AZ, each surging by 2.
    demand = _stack("eks-zonal-spot")
    pool = next(c.pool for c in demand.contributions if c.pool.name == "a10g")
    assert pool.node_groups > 1 and pool.surge == 2 * pool.node_groups


def test_gke_creation_counts_initial_nodes_per_zone_times_zones() -> None:
    raw = gke_config(
        {
            "name": "t4",
            "machineType": "n1-standard-8",
            "minNodes": 5,
            "maxNodes": 8,  # zones x initial nodes per zone <= maxNodes (a best-effort rule)
            "bestEffort": {"minNodes": 5},
            "zones": ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"],
        },
        **{"gcp:region": None},
    )
    config = parse(raw, "x")
    rows = {r.key.quota: r for r in d.stack_demand(config, Catalog.load(), build_plan(config))[1]}
    # initialNodeCount ceil(5 / 4) = 2 per zone x 4 zones = 8 nodes at creation (not 5), + 1 surge;
    # above the total max only where the planner allows it, so the arithmetic is checked alone too.
    assert rows["NVIDIA_T4_GPUS"].needed == 8 + 1
    assert gke_created(5, 2, 4) == 8 and gke_created(20, 0, 4) == 20


def _where_prices(stack: str) -> dict[str, dict[str, float | None]]:
    import io
    import json

    from quota.check import main

    out = io.StringIO()
    assert (
        main(["--stack", stack, "--where", "--offline", "--json"], out=out, err=io.StringIO()) == 0
    )
    doc = json.loads(out.getvalue())
    return {
        p["pool"]: {r["region"]: r["pricePerNodeHour"] for r in p["regions"]} for p in doc["where"]
    }


@pytest.mark.parametrize(
    ("stack", "region"),
    [("gke-t4", "us-central1"), ("eks-g4dn", "us-west-2"), ("gke-l4-spot", "us-central1")],
)
def test_where_prices_a_node_as_infra_plan_does_in_the_stacks_region(
    stack: str, region: str
) -> None:
    from infra.core.cost import estimate

    config = parse_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    cost = estimate(build_plan(config, Catalog.load()))
    where = _where_prices(stack)
    for pool in cost.pools:
        assert pool.per_node is not None
        assert where[pool.name][region] == round(pool.per_node, 5), pool.name


def test_where_prices_n1_nodes_with_their_host_not_the_gpu_alone() -> None:
    from infra.core.cost import Prices

    t4 = _where_prices("gke-t4")["gpu-t4"]["us-central1"]
    gpu = Catalog.load().gcp_price("nvidia-tesla-t4", 1, "us-central1-a")
    host = Prices.load().gcp_vm("n1-highmem-8", "us-central1-a")[0]
    assert gpu is not None and gpu[0] is not None and host is not None
    assert t4 is not None and t4 >= gpu[0] + host - 1e-9


def test_gke_node_limits_are_rows_with_their_documented_source() -> None:
    from quota import limits

    config = parse_file(ROOT / "stacks" / "Pulumi.gke-t4.yaml")
    demand = d.stack_contributions(config, Catalog.load(), build_plan(config))
    sizings = list(dict.fromkeys(c.pool for c in demand.contributions))
    ld = limits.stack_limits("gcp", build_plan(config), "us-central1", sizings)
    rows = {r.key.quota: r for r in ld.rows}
    # gpu-t4: a total max of 20 over 4 zones, 5 per zone; the cluster: 20 + 3 system + 1
    assert rows["GKE_NODES_PER_POOL_ZONE"].needed == 5
    assert rows["GKE_NODES_PER_CLUSTER"].needed == 24
    assert all("cloud.google.com/kubernetes-engine/quotas" in r.source for r in ld.rows)
    readings = limits.limit_readings(ld)
    assert readings[rows["GKE_NODES_PER_CLUSTER"].key].limit == 5000


def test_gke_nodes_per_pool_zone_divides_the_pool_over_its_zones() -> None:
    # "Nodes per node pool zone: 1,000" (https://cloud.google.com/kubernetes-engine/quotas)
    from quota import limits

    config = parse_file(ROOT / "stacks" / "Pulumi.gke-t4.yaml")

    def per_zone(zones: tuple[str, ...]) -> int:
        pool = d.NodeGroupSizing(
            path="gpuPools[0]",
            name="big",
            machine_types=("n1-standard-8",),
            gpu_type="nvidia-tesla-t4",
            gpus_per_node=1,
            vcpus=8,
            max_nodes=2500,
            zones=zones,
        )
        ld = limits.stack_limits("gcp", build_plan(config), "us-central1", [pool])
        return next(r.needed for r in ld.rows if r.key.quota == "GKE_NODES_PER_POOL_ZONE")

    assert per_zone(("us-central1-a", "us-central1-b", "us-central1-c")) == 834  # fits 1,000
    assert per_zone(("us-central1-a", "us-central1-b")) == 1250  # cannot fit
    assert per_zone(()) == 2500  # zones not listed: one counted


def test_gke_nodes_per_cluster_on_an_existing_cluster_is_judged_on_the_stacks_pools_and_says_so(
    tmp_path: Path,
) -> None:
    from quota import limits
    from quota.check import _limit_checks

    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.gke-t4.yaml").read_text())
    doc["config"]["gpu-infra:cluster"]["existing"] = True
    doc["config"]["gpu-infra:cluster"]["cpuNodes"] = 3
    doc["config"]["gpu-infra:gpuOperator"] = {"enabled": False}
    path = tmp_path / "Pulumi.attach.yaml"
    path.write_text(yaml.safe_dump(doc))
    config = parse_file(path)
    plan = build_plan(config)
    demand = d.stack_contributions(config, Catalog.load(), plan)
    sizings = list(dict.fromkeys(c.pool for c in demand.contributions))
    ld = limits.stack_limits("gcp", plan, "us-central1", sizings)
    assert ld.existing_cluster
    per_cluster = next(c for c in _limit_checks("gcp", None, ld) if "CLUSTER" in c.demand.key.quota)
    assert per_cluster.status == "ok"  # never 'unknown' for every attached GKE stack
    assert "other node pools are not counted" in per_cluster.reason


def test_existing_cluster_limit_is_unknown_until_its_other_groups_are_counted() -> None:
    from quota import limits
    from quota.arithmetic import verdict

    config = parse_file(ROOT / "stacks" / "Pulumi.eks-existing.yaml")
    ld = limits.stack_limits("aws", build_plan(config), "us-west-2", [])
    assert ld.existing_cluster
    per_cluster = next(r for r in ld.rows if r.key.quota == "L-6D54EA21")
    unread = limits.limit_readings(ld, {}, "ListNodegroups: permission denied: eks:ListNodegroups")
    assert verdict(per_cluster.needed, unread[per_cluster.key])[0] == "unknown"
    counted = limits.limit_readings(ld, {}, 29)
    assert counted[per_cluster.key].usage == 29


def _odcr_pool(max_nodes: int = 4) -> d.NodeGroupSizing:
    return d.NodeGroupSizing(
        path="gpuPools[0]",
        name="h200",
        machine_types=("p5en.48xlarge",),
        gpu_type=None,
        gpus_per_node=8,
        vcpus=192,
        max_nodes=max_nodes,
        reservation_id="cr-1",
        zones=("usw2-az1",),
        node_group_names=("h200-usw2-az1-0a1b2c3d",),
    )


def _cr(itype: str = "p5en.48xlarge", **kw: Any) -> Any:
    from quota.clients.aws import CapacityReservation

    base: dict[str, Any] = {"total": 3, "available": 3, "az_id": "usw2-az1"}
    return CapacityReservation("cr-1", itype, "active", **{**base, **kw})


def test_a_reservation_of_another_type_holds_none_of_a_pools_nodes() -> None:
    pool = _odcr_pool()
    assert d.reserved_nodes([pool], {"cr-1": _cr()}) == {"h200": 3}
    held = d.reserved_nodes([pool], {"cr-1": _cr("p5.48xlarge")})
    assert isinstance(held["h200"], str) and "p5.48xlarge" in held["h200"]
    rows = d.aws_contributions("us-west-2", [pool]).rows(reserved={"h200": 3})
    assert rows[0].needed == 192 * 1
    rows = d.aws_contributions("us-west-2", [pool]).rows(reserved=held)
    assert rows[0].needed == 192 * 4 and "counted in full" in rows[0].pools[0]


def test_a_reservation_holds_only_its_free_slots_plus_the_pools_own_instances() -> None:
    # 10 reserved, 6 taken by instances of no node group of this pool, 4 free: 4 of the pool's
    # 10 nodes fit in it, the other 6 draw quota of their own.
    pool = _odcr_pool(max_nodes=10)
    busy = _cr(total=10, available=4, running=(("", 6),))
    assert d.reserved_nodes([pool], {"cr-1": busy}) == {"h200": 4}
    own = _cr(total=10, available=4, running=(("h200-usw2-az1-0a1b2c3d", 2), ("other", 4)))
    assert d.reserved_nodes([pool], {"cr-1": own}) == {"h200": 6}
    rows = d.aws_contributions("us-west-2", [pool]).rows(reserved={"h200": 4})
    assert rows[0].needed == 192 * 6


def test_a_reservation_in_another_az_or_shared_in_holds_none_of_a_pools_nodes() -> None:
    pool = _odcr_pool()
    other_az = d.reserved_nodes([pool], {"cr-1": _cr(az_id="usw2-az2")})["h200"]
    assert isinstance(other_az, str) and "usw2-az2" in other_az
    shared = d.reserved_nodes([pool], {"cr-1": _cr(owner_id="111122223333", shared_in=True)})
    assert isinstance(shared["h200"], str) and "111122223333" in shared["h200"]


def test_a_replaced_node_group_runs_beside_its_successor_as_a_line_of_its_own(
    tmp_path: Path,
) -> None:
    import io
    import json

    from quota.check import main

    # gpu-t4 moves from g4dn.xlarge to g4dn.2xlarge: a new node group name, so a replacement
    # (created before the old group is deleted); the old group keeps its own type's vCPUs.
    text = (ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_text()
    new = tmp_path / "Pulumi.new.yaml"
    new.write_text(text.replace("machineType: g4dn.xlarge\n", "machineType: g4dn.2xlarge\n", 1))
    out = io.StringIO()
    args = ["--config", str(new), "--diff", "eks-g4dn", "--offline", "--json"]
    assert main(args, out=out, err=io.StringIO()) == 0
    g = next(c for c in json.loads(out.getvalue())["checks"] if c["quota"] == "L-DB2E81BA")
    assert g["needed"] == 8 * 20 + 4 * 20  # the new group at max, no update surge, + the old
    assert any(p.startswith("gpu-t4 replaced (") and "4 x 20" in p for p in g["pools"])
    groups = next(c for c in json.loads(out.getvalue())["checks"] if c["quota"] == "L-6D54EA21")
    assert groups["needed"] == 3 + 1  # the old group exists until its successor is up
    out = io.StringIO()  # no change: nothing replaced, the update surge stays
    main(
        ["--stack", "eks-g4dn", "--diff", "eks-g4dn", "--offline", "--json"],
        out=out,
        err=io.StringIO(),
    )
    same = next(c for c in json.loads(out.getvalue())["checks"] if c["quota"] == "L-DB2E81BA")
    assert same["needed"] == 104


def _diff_checks(new: Path) -> dict[str, Any]:
    import io
    import json

    from quota.check import main

    out = io.StringIO()
    args = ["--config", str(new), "--diff", "eks-g4dn", "--offline", "--json"]
    assert main(args, out=out, err=io.StringIO()) == 0
    return {c["quota"]: c for c in json.loads(out.getvalue())["checks"]}


def test_a_removed_pools_groups_run_beside_the_new_ones_until_deleted_last(
    tmp_path: Path,
) -> None:
    # "Pulumi performs deletes last" in an update (pulumi/pulumi#16589): gpu-t4-spot's group
    # (max 20 x 4 vCPUs) still runs while gpu-t4 is updated.
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_text())
    pools = doc["config"]["gpu-infra:gpuPools"]
    doc["config"]["gpu-infra:gpuPools"] = [p for p in pools if p["name"] != "gpu-t4-spot"]
    new = tmp_path / "Pulumi.new.yaml"
    new.write_text(yaml.safe_dump(doc))
    checks = _diff_checks(new)
    assert checks["L-3819A6DF"]["needed"] == 4 * 20
    assert any(p.startswith("gpu-t4-spot replaced (") for p in checks["L-3819A6DF"]["pools"])
    assert checks["L-6D54EA21"]["needed"] == 2 + 1  # gpu-t4, system + the deleted spot group


def test_a_group_the_diff_engine_replaces_under_its_old_name_runs_beside_its_successor(
    tmp_path: Path,
) -> None:
    # A new cluster name re-creates every node group (clusterName is ForceNew,
    # replace_forcing_properties.csv) although no pool changes name or type.
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.eks-g4dn.yaml").read_text())
    doc["config"]["gpu-infra:cluster"]["name"] = "ml2"
    new = tmp_path / "Pulumi.new.yaml"
    new.write_text(yaml.safe_dump(doc))
    checks = _diff_checks(new)
    assert checks["L-DB2E81BA"]["needed"] == 4 * 20 + 4 * 20  # new gpu-t4 + the old one
    assert checks["L-6D54EA21"]["needed"] == 3 + 3


def test_where_price_is_unknown_when_the_machine_part_is_unpriced() -> None:
    from infra.core.cost import Prices
    from quota.where import gcp_offer

    class NoHostPrices(Prices):
        def gcp_vm(self, machine_type: str, zone: str) -> tuple[float | None, float | None]:
            return (None, None)

    config = parse_file(ROOT / "stacks" / "Pulumi.gke-t4.yaml")
    demand = d.stack_contributions(config, Catalog.load(), build_plan(config))
    pool = next(c.pool for c in demand.contributions if c.pool.name == "gpu-t4")
    offers = gcp_offer(pool, Catalog.load(), NoHostPrices())
    assert offers and all(p is None for p in offers.values())  # never the GPU price alone
