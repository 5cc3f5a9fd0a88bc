"""Quota demand (pure): which quota, in which region, needs how much."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.core.catalog.vendored import DATA_DIR, Catalog, read_header
from infra.core.config.stack import parse, parse_file
from infra.core.eks.capacity import eks_surge
from infra.core.errors import ConfigErrors
from infra.core.plan import build_plan
from quota import demand as d
from quota.arithmetic import Reading
from quota.keys import QuotaKey
from tests.conftest import eks_shape_config

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "quota"


def sizing(**kw: object) -> d.NodeGroupSizing:
    base: dict[str, object] = {
        "path": "gpuPools[0]",
        "name": "p",
        "machine_types": ("n1-highmem-8",),
        "gpu_type": "nvidia-tesla-t4",
        "gpus_per_node": 1,
        "vcpus": 8,
        "max_nodes": 20,
        "surge": 1,
    }
    base.update(kw)
    return d.NodeGroupSizing(**base)  # type: ignore[arg-type]


def by_quota(rows: list[d.DemandRow]) -> dict[str, d.DemandRow]:
    return {r.key.quota: r for r in rows}


def stack_rows(path: Path) -> tuple[str, dict[str, d.DemandRow]]:
    config = parse_file(path)
    cloud, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    return cloud, by_quota(rows)


def test_gke_t4_stack_needs_21_t4_gpus_in_us_central1_with_surge() -> None:
    cloud, rows = stack_rows(ROOT / "stacks" / "Pulumi.gke-t4.yaml")
    assert cloud == "gcp"
    t4 = rows["NVIDIA_T4_GPUS"]
    assert (t4.key.scope, t4.key.region, t4.needed) == ("region", "us-central1", 21)
    # n1 GPU nodes: 8 vCPUs x (20 + 1 surge); the e2 system pool: 4 x (3 + 1 surge) on E2_CPUS
    assert rows["CPUS"].needed == 168 and rows["CPUS"].key.region == "us-central1"
    assert rows["E2_CPUS"].needed == 16
    assert rows["GPUS_ALL_REGIONS"].needed == 21 and rows["GPUS_ALL_REGIONS"].key.region is None
    # 20 + 3 nodes + one surge node (the largest pool's), each with an external IP and 100 GB
    assert rows["INSTANCES"].needed == 24 and rows["IN_USE_ADDRESSES"].needed == 24
    assert rows["SSD_TOTAL_GB"].needed == 2400 and rows["SSD_TOTAL_GB"].key.unit == "GB"


def test_e2_draws_on_e2_cpus_with_cpus_as_the_fallback_where_unreported() -> None:
    config = parse_file(ROOT / "stacks" / "Pulumi.gke-t4.yaml")
    demand = d.stack_contributions(config, Catalog.load(), build_plan(config))
    missing = {
        QuotaKey("gcp", "region", "us-central1", "E2_CPUS", "vCPUs", "compute-region"): Reading(
            error="quota missing: E2_CPUS not reported for region us-central1"
        )
    }
    resolved = by_quota(demand.rows(d.reading_pick(missing)))
    assert "E2_CPUS" not in resolved and resolved["CPUS"].needed == 168 + 16 - 4
    assert any("E2_CPUS not reported" in p for p in resolved["CPUS"].pools)


def test_gke_surge_is_the_largest_single_pools_not_the_sum() -> None:
    a = sizing(name="a", max_nodes=10, surge=1, gpus_per_node=1)
    b = sizing(name="b", max_nodes=4, surge=1, gpus_per_node=4, machine_types=("n1-standard-32",))
    rows = by_quota(d.gcp_demand("us-central1", [a, b]))
    assert rows["NVIDIA_T4_GPUS"].needed == 10 + 16 + 4  # one pool upgrades at a time: +4, not +5
    assert rows["INSTANCES"].needed == 14 + 1


def test_bootstrap_pool_counts_as_max_not_on_top() -> None:
    boot = sizing(
        name="default-pool",
        machine_types=("e2-medium",),
        gpu_type=None,
        gpus_per_node=0,
        vcpus=2,
        max_nodes=3,
        surge=0,
        bootstrap=True,
    )
    rows = by_quota(d.gcp_demand("us-central1", [sizing(max_nodes=1, surge=0), boot]))
    assert rows["INSTANCES"].needed == 3  # max(3 bootstrap, 1 steady)
    assert rows["E2_CPUS"].needed == 6  # only the bootstrap pool draws on E2


def test_private_nodes_need_no_external_addresses() -> None:
    rows = by_quota(d.gcp_demand("us-central1", [sizing(external_ip=False)]))
    assert "IN_USE_ADDRESSES" not in rows and rows["INSTANCES"].needed == 21


def test_boot_disk_type_picks_its_disk_quota_and_local_ssds_count() -> None:
    rows = by_quota(
        d.gcp_demand("r1", [sizing(disk_type="pd-standard", disk_gb=200, local_ssds=2)])
    )
    assert rows["DISKS_TOTAL_GB"].needed == 200 * 21 and "SSD_TOTAL_GB" not in rows
    assert rows["LOCAL_SSD_TOTAL_GB"].needed == 2 * 375 * 21


def test_eks_stack_needs_4_vcpus_per_node_under_g_and_spot_codes_with_update_surge() -> None:
    cloud, rows = stack_rows(ROOT / "stacks" / "Pulumi.eks-g4dn.yaml")
    assert cloud == "aws"
    # 20 max + max(2 x 3 AZs, maxUnavailable 1) = 26 nodes of 4 vCPUs
    assert rows["L-DB2E81BA"].needed == 4 * 26 and rows["L-DB2E81BA"].key.region == "us-west-2"
    assert rows["L-3819A6DF"].needed == 4 * 26


def test_eks_fixture_sizes_every_group_from_the_plan() -> None:
    config = parse_file(FIX / "Pulumi.eks-g4dn.yaml")
    _, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    assert by_quota(rows)["L-DB2E81BA"].needed == 4 * (8 + 6)
    assert by_quota(rows)["L-3819A6DF"].needed == 4 * (4 + 6)


def test_eks_update_surge_is_twice_the_azs_or_max_unavailable() -> None:
    assert eks_surge(3, max_unavailable=1) == 6 and eks_surge(1, max_unavailable=5) == 5


def test_zonal_location_quota_lives_in_the_zone_region() -> None:
    _, rows = stack_rows(FIX / "Pulumi.gke-zonal.yaml")
    assert rows["NVIDIA_T4_GPUS"].key.region == "us-central1"
    assert rows["NVIDIA_T4_GPUS"].needed == 2 * (3 + 1)


def test_fallback_pools_of_a_compute_class_count_too() -> None:
    _, rows = stack_rows(ROOT / "stacks" / "Pulumi.gke-l4-spot.yaml")
    assert rows["PREEMPTIBLE_NVIDIA_L4_GPUS"].needed == 9
    assert rows["NVIDIA_L4_GPUS"].needed == 5  # on-demand fallback
    assert rows["NVIDIA_T4_GPUS"].needed == 5  # T4 fallback
    assert rows["GPUS_ALL_REGIONS"].needed == 8 + 4 + 4 + 1  # one surge, the largest pool's


def test_spot_demand_moves_to_standard_rows_when_preemptible_quota_is_not_granted() -> None:
    demand = d.gcp_contributions("us-central1", [sizing(model="spot")])
    offline = by_quota(demand.rows())
    assert "NVIDIA_T4_GPUS" not in offline and offline["PREEMPTIBLE_NVIDIA_T4_GPUS"].needed == 21
    zero = {
        k: Reading(limit=0.0, usage=0.0)
        for k in demand.keys_to_read()
        if k.quota.startswith("PREEMPTIBLE_")
    }
    rows = by_quota(demand.rows(d.reading_pick(zero)))
    assert "PREEMPTIBLE_NVIDIA_T4_GPUS" not in rows and rows["NVIDIA_T4_GPUS"].needed == 21
    assert rows["CPUS"].needed == 168
    assert any("not granted" in p for p in rows["NVIDIA_T4_GPUS"].pools)
    granted = {k: Reading(limit=4.0, usage=0.0) for k in zero}
    rows = by_quota(demand.rows(d.reading_pick(granted)))
    assert rows["PREEMPTIBLE_NVIDIA_T4_GPUS"].needed == 21 and "NVIDIA_T4_GPUS" not in rows


def test_spot_stays_on_preemptible_rows_when_that_limit_is_unreadable() -> None:
    demand = d.gcp_contributions("us-central1", [sizing(model="spot")])
    broken = {k: Reading(error="regions.get: HTTP 500") for k in demand.keys_to_read()}
    rows = by_quota(demand.rows(d.reading_pick(broken)))
    assert "PREEMPTIBLE_NVIDIA_T4_GPUS" in rows and "NVIDIA_T4_GPUS" not in rows


def test_flex_start_and_queued_draw_on_preemptible_quota_only() -> None:
    for model in ("flex-start", "queued"):
        demand = d.gcp_contributions("r1", [sizing(model=model, surge=0)])
        zero = {k: Reading(limit=0.0, usage=0.0) for k in demand.keys_to_read()}
        rows = by_quota(demand.rows(d.reading_pick(zero)))
        assert rows["PREEMPTIBLE_NVIDIA_T4_GPUS"].needed == 20 and "NVIDIA_T4_GPUS" not in rows
        assert rows["PREEMPTIBLE_CPUS"].needed == 160 and "CPUS" not in rows


def test_specific_reservation_pool_adds_no_vcpu_or_gpu_demand() -> None:
    rows = by_quota(d.gcp_demand("r1", [sizing(model="reservation")]))
    assert not {"NVIDIA_T4_GPUS", "CPUS", "GPUS_ALL_REGIONS"} & set(rows)
    assert rows["INSTANCES"].needed == 21


def test_global_rows_sum_every_pool_and_follow_regional_rows() -> None:
    rows = d.gcp_demand(
        "us-central1",
        [sizing(), sizing(name="q", gpu_type="nvidia-l4", machine_types=("g2-standard-8",))],
    )
    scopes = [r.key.scope for r in rows]
    assert scopes == sorted(scopes, key=["region", "global"].index)
    assert by_quota(rows)["GPUS_ALL_REGIONS"].needed == 41  # 40 + one pool's surge
    assert len(by_quota(rows)["GPUS_ALL_REGIONS"].pools) == 3


def test_h100_on_demand_uses_the_cloud_quotas_family_quota() -> None:
    rows = by_quota(
        d.gcp_demand(
            "us-east4",
            [
                sizing(
                    gpu_type="nvidia-h100-80gb", gpus_per_node=8, machine_types=("a3-highgpu-8g",)
                )
            ],
        )
    )
    fam = rows["NVIDIA_H100_GPUS"]
    assert fam.key.source == "cloudquotas" and fam.key.gpu_family == "NVIDIA_H100"


@pytest.mark.parametrize(
    "machine",
    ["g2-standard-8", "g4-standard-48", "a3-highgpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g"],
)
@pytest.mark.parametrize("model", ["standard", "spot"])
def test_g2_g4_a3_a4_a4x_need_gpu_quota_only_no_regional_vcpu_quota(
    machine: str, model: str
) -> None:
    # https://cloud.google.com/compute/resource-usage#gpu_quota: "You don't need to request CPU
    # quotas" for A4X Max, A4X, A4, A3, G4 and G2 VMs.
    pool = sizing(gpu_type=None, gpus_per_node=0, machine_types=(machine,), model=model)
    keys = d.gcp_contributions("us-east4", [pool]).keys_to_read()
    assert [k for k in keys if k.unit == "vCPUs" and k.scope == "region"] == []
    assert any(k.quota == "INSTANCES" for k in keys)  # the node is still counted


def test_a2_keeps_its_a2_cpus_quota() -> None:
    pool = sizing(gpu_type="nvidia-tesla-a100", gpus_per_node=1, machine_types=("a2-highgpu-1g",))
    rows = by_quota(d.gcp_demand("us-central1", [pool]))
    assert rows["A2_CPUS"].needed > 0


def test_h100_spot_uses_the_preemptible_compute_metric() -> None:
    rows = by_quota(d.gcp_demand("us-east4", [sizing(gpu_type="nvidia-h100-80gb", model="spot")]))
    assert rows["PREEMPTIBLE_NVIDIA_H100_GPUS"].key.source == "compute-region"


def test_machine_family_picks_its_cpu_metric() -> None:
    rows = by_quota(
        d.gcp_demand("r1", [sizing(machine_types=("a2-highgpu-1g",), gpu_type="nvidia-tesla-a100")])
    )
    assert "A2_CPUS" in rows and "CPUS" not in rows


@pytest.mark.parametrize(
    ("itype", "spot", "code"),
    [
        ("g4dn.xlarge", False, "L-DB2E81BA"),
        ("g4dn.xlarge", True, "L-3819A6DF"),
        ("vt1.3xlarge", False, "L-DB2E81BA"),
        ("p3.2xlarge", False, "L-417A185B"),  # not the G quota (SkyPilot's mapping bug)
        ("p3.2xlarge", True, "L-7212CCBC"),
        ("p4d.24xlarge", True, "L-7212CCBC"),
        ("p5.48xlarge", True, "L-C4BD4855"),
        ("p5.48xlarge", False, "L-417A185B"),
        ("m5.large", False, "L-1216C47A"),
        ("t3.large", True, "L-34B43A08"),
    ],
)
def test_aws_instance_type_maps_to_its_vcpu_quota_code(itype: str, spot: bool, code: str) -> None:
    assert d.aws_quota_code(itype, spot) == code


def test_aws_groups_of_one_class_sum_per_code_plus_every_groups_surge() -> None:
    # one pulumi up updates every node group concurrently (pulumi up --parallel: unbounded)
    a = sizing(machine_types=("g4dn.xlarge",), gpu_type=None, vcpus=4, max_nodes=5, surge=6)
    b = sizing(
        name="b", machine_types=("g5.2xlarge",), gpu_type=None, vcpus=8, max_nodes=2, surge=4
    )
    rows = by_quota(d.aws_demand("us-west-2", [a, b]))
    assert rows["L-DB2E81BA"].needed == 20 + 16 + 24 + 32 and len(rows) == 1


def test_every_catalog_gpu_has_a_quota_metric() -> None:
    assert set(Catalog.load().gcp_accelerators()) <= set(d.gcp_accelerator_quotas())


def test_every_catalog_aws_gpu_type_has_a_quota_code() -> None:
    for t in Catalog.load().aws_instances():
        assert d.aws_quota_code(t, False) and d.aws_quota_code(t, True), t


@pytest.mark.parametrize(
    "name",
    [
        "gcp_accelerator_quotas.csv",
        "gcp_cpu_quota_metrics.csv",
        "gcp_disk_quota_metrics.csv",
        "aws_quota_classes.csv",
    ],
)
def test_quota_data_files_carry_provenance(name: str) -> None:
    header = " ".join(read_header(name, DATA_DIR))
    assert "source" in header and "fetched" in header


def test_kubernetes_platform_has_no_cloud_quota_and_says_so() -> None:
    config = parse_file(ROOT / "stacks" / "Pulumi.onprem-containerd.yaml")
    assert config.platform == "kubernetes"
    with pytest.raises(ConfigErrors, match="platform"):
        d.stack_demand(config, Catalog.load(), build_plan(config))


def gke_raw(cluster: dict[str, object]) -> dict[str, object]:
    """A GKE stack: cluster ml in us-central1 (and ``cluster``), one T4 pool of 2 nodes at most."""
    return {
        "gcp:project": "demo-project",
        "gpu-infra:platform": "gke",
        "gpu-infra:cluster": {"name": "ml", "location": "us-central1", **cluster},
        "gpu-infra:gpuPools": [
            {
                "name": "t4",
                "machineType": "n1-standard-8",
                "gpu": {"type": "nvidia-tesla-t4", "count": 1},
                "maxNodes": 2,
            }
        ],
    }


def test_existing_gke_cluster_adds_no_system_pool_demand() -> None:
    raw = {
        **gke_raw({"existing": True, "cpuNodes": 4}),
        "gpu-infra:gpuOperator": {"clusterWide": True},
    }
    config = parse(raw, "x")
    _, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    assert by_quota(rows)["CPUS"].needed == 8 * 3
    assert all("system" not in p and "bootstrap" not in p for r in rows for p in r.pools)


def test_gke_family_without_known_cpu_quota_is_a_config_issue_not_a_dropped_row() -> None:
    config = parse(gke_raw({"systemPool": {"machineType": "x9-standard-4"}}), "x")
    with pytest.raises(ConfigErrors) as e:  # the planner refuses it, so both CLIs do
        build_plan(config, Catalog.load())
    assert "cluster.systemPool.machineType: 'x9-standard-4': family 'x9' has no known vCPU" in str(
        e.value
    )


def test_family_without_compute_metric_reads_the_cloud_quotas_vm_family_quota() -> None:
    config = parse(gke_raw({"systemPool": {"machineType": "c4-standard-4"}}), "x")
    _, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    assert by_quota(rows)["CPUS"].needed == 8 * 3  # the n1 GPU pool only
    vm = by_quota(rows)[d.VM_FAMILY_QUOTA]
    assert (vm.key.vm_family, vm.needed) == ("C4", 4 * (3 + 1))
    assert by_quota(rows)["CPUS_ALL_REGIONS"].needed == 8 * 2 + 4 * 3 + 8  # the largest surge


def test_gcp_demand_refuses_an_unvetted_machine_family() -> None:
    with pytest.raises(KeyError):
        d.gcp_demand("us-central1", [sizing(machine_types=("x9-standard-4",), gpu_type=None)])


def eks_raw(system_machine_type: str) -> dict[str, object]:
    return {
        "aws:region": "us-west-2",
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": {
            "name": "ml",
            "location": "us-west-2",
            "systemPool": {"machineType": system_machine_type},
        },
        "gpu-infra:gpuPools": [{"name": "t4", "machineType": "g4dn.xlarge", "maxNodes": 2}],
    }


def test_eks_t3_medium_system_group_is_sized_as_two_vcpus_not_one() -> None:
    config = parse(eks_raw("t3.medium"), "x")
    _, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    # t3.medium has 2 vCPUs (a Graviton medium has 1): 2 x (max nodes + surge 2 x 4 AZs)
    assert by_quota(rows)["L-1216C47A"].needed == 2 * (config.cluster.system_pool.max_nodes + 8)


def test_eks_system_size_of_unknown_vcpus_is_reported_not_guessed() -> None:
    config = parse(eks_raw("m6i.medium"), "x")
    with pytest.raises(
        ConfigErrors, match=r"cluster\.systemPool\.machineType: 'm6i\.medium': vCPUs of this size"
    ):
        d.stack_demand(config, Catalog.load(), build_plan(config))


def test_eks_system_group_vcpus_follow_the_size_name() -> None:
    config = parse(eks_raw("t3.2xlarge"), "x")
    _, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    # 8 vCPUs x (max nodes + update surge of 2 x the 4 control-plane AZs)
    assert by_quota(rows)["L-1216C47A"].needed == 8 * (config.cluster.system_pool.max_nodes + 8)


def test_spot_local_ssd_uses_preemptible_local_ssd_gb_once_granted() -> None:
    pool = sizing(model="spot", local_ssds=2)
    demand = d.gcp_contributions("r1", [pool])
    spot_ssd = QuotaKey("gcp", "region", "r1", "PREEMPTIBLE_LOCAL_SSD_GB", "GB", "compute-region")
    std_ssd = QuotaKey("gcp", "region", "r1", "LOCAL_SSD_TOTAL_GB", "GB", "compute-region")
    granted = by_quota(demand.rows(d.reading_pick({spot_ssd: Reading(limit=10000, usage=0)})))
    assert granted["PREEMPTIBLE_LOCAL_SSD_GB"].needed == 2 * 375 * 21
    assert "LOCAL_SSD_TOTAL_GB" not in granted
    ungranted = by_quota(demand.rows(d.reading_pick({spot_ssd: Reading(limit=0, usage=0)})))
    assert ungranted["LOCAL_SSD_TOTAL_GB"].key == std_ssd
    assert "PREEMPTIBLE_LOCAL_SSD_GB" not in ungranted


def test_bundled_local_ssds_of_the_planned_machine_count_against_local_ssd_quota() -> None:
    _, rows = stack_rows(FIX / "Pulumi.gke-h100.yaml")  # a3-highgpu-8g: 16 Local SSDs each
    assert rows["LOCAL_SSD_TOTAL_GB"].needed == 16 * 375 * (2 + 1)


def test_private_nodes_in_the_stack_file_drop_the_address_row() -> None:
    _, rows = stack_rows(FIX / "Pulumi.gke-flex.yaml")
    assert "IN_USE_ADDRESSES" not in rows and rows["INSTANCES"].needed == 4 + 2 + 3 + 1


# --- a declared gpuPools[].shape the quota tables lack --------------------------------------


def test_declared_shape_without_quota_rows_draws_unknown_rows_and_keeps_every_other_draw():
    config = parse_file(FIX / "Pulumi.gke-declared-shape.yaml")
    _, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    q = by_quota(rows)
    gpus, vcpus = q["unknown:nvidia-b300"], q["unknown:a5"]
    assert (gpus.needed, gpus.key.source, vcpus.needed, vcpus.key.unit) == (
        24,  # 8 x 2 nodes + one node of surge
        "unmapped",
        672,
        "vCPUs",
    )
    # Fail closed: the pool still counts in the global GPU and vCPU quotas, VMs, IPs and disks.
    assert q["GPUS_ALL_REGIONS"].needed == 24 and q["CPUS_ALL_REGIONS"].needed == 684
    assert any(p.startswith("b300:") for p in q["INSTANCES"].pools)
    assert any(p.startswith("b300:") for p in q["SSD_TOTAL_GB"].pools)


def test_unmapped_quotas_are_never_read_and_read_as_unknown():
    config = parse_file(FIX / "Pulumi.gke-declared-shape.yaml")
    demand = d.stack_contributions(config, Catalog.load(), build_plan(config))
    assert all(k.source != "unmapped" for k in demand.keys_to_read())
    (row,) = [r for r in demand.rows() if r.key.quota == "unknown:a5"]
    reading = d.reading_of({}, row.key)
    assert reading.limit is None and "declared gpuPools[].shape" in (reading.error or "")


def _a5_draws(**kw: object) -> dict[str, int]:
    args: dict[str, object] = {
        "machine_type": "a5-highgpu-8g",
        "vcpus": 224,
        "accelerator": "nvidia-b300",
        "gpus": 8,
        "model": "standard",
        "disk_type": "pd-balanced",
        "disk_gb": 100,
    }
    args.update(kw)
    return {d.key.quota: d.per_node for d in d.gcp_vm_quotas("us-central1", **args)}  # type: ignore[arg-type]


def test_rules_raise_for_a_gpu_without_a_quota_row_unless_the_shape_is_declared():
    # Only a declared shape gets unknown rows; a catalog type the tables lack is our bug.
    with pytest.raises(KeyError):
        _a5_draws()
    assert _a5_draws(declared=True)["unknown:nvidia-b300"] == 8


def test_a_declared_known_gpu_on_an_unknown_family_keeps_its_gpu_rows():
    draws = _a5_draws(accelerator="nvidia-b200", declared=True)
    assert draws["NVIDIA_B200_GPUS"] == 8 and draws["unknown:a5"] == 224
    assert "unknown:nvidia-b200" not in draws


@pytest.mark.parametrize("model", ["spot", "flex-start", "queued"])
def test_a_declared_shape_on_preemptible_capacity_is_an_unknown_preemptible_row(model):
    draws = _a5_draws(model=model, declared=True)
    assert draws["unknown:preemptible:nvidia-b300"] == 8 and "unknown:nvidia-b300" not in draws


def test_a_declared_shape_on_a_specific_reservation_adds_no_gpu_or_vcpu_demand():
    draws = _a5_draws(model="reservation", declared=True)
    assert not [q for q in draws if q.startswith("unknown:") or q.endswith("ALL_REGIONS")]


def test_a_fallback_onto_a_declared_machine_type_is_sized_not_refused():
    config = parse(
        {
            "gcp:project": "demo-project",
            "gcp:region": "us-central1",
            "gpu-infra:platform": "gke",
            "gpu-infra:cluster": {"name": "research", "location": "us-central1"},
            "gpu-infra:gpuPools": [
                {
                    "name": "b300",
                    "machineType": "a5-highgpu-8g",
                    "shape": {"gpuModel": "nvidia-b300", "gpus": 8, "vcpus": 224, "memoryGb": 3968},
                    "zones": ["us-central1-b"],
                    "maxNodes": 2,
                    "fallback": [{"machineType": "a5-highgpu-8g", "spot": True}],
                }
            ],
        },
        "gke-fallback",
    )
    _, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    pre = by_quota(rows)["unknown:preemptible:nvidia-b300"]
    assert any(p.startswith("b300-6e7b68:") for p in pre.pools)


def test_a_declared_eks_type_of_no_quota_class_is_an_unknown_row_not_an_error():
    config = parse(eks_shape_config("u9.2xlarge"), "eks-new")
    _, rows = d.stack_demand(config, Catalog.load(), build_plan(config))
    row = by_quota(rows)["unknown:u9"]
    assert (row.key.cloud, row.key.unit, row.needed) == ("aws", "vCPUs", 64)
    assert "instance family 'u9'" in d.reading_of({}, row.key).error  # type: ignore[operator]


def test_a_spot_metric_is_verified_exactly_when_the_compute_client_enum_names_it() -> None:
    # google-cloud-compute compute_v1 Quota.Metric: the metric names the Compute API returns
    from google.cloud.compute_v1.types import Quota

    enum = set(Quota.Metric.__members__)
    for accelerator, q in d.gcp_accelerator_quotas().items():
        assert q.spot_verified == (q.spot in enum), accelerator
