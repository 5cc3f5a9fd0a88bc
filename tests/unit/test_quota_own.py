"""What the stack itself runs (pure): the marks the clouds put on its VMs, which VMs are its own,
and how own usage enters the verdict and the request size."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from infra.cli import stack_file
from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import parse_file
from infra.core.plan import build_plan
from quota.arithmetic import Reading, counted_own, desired_value, verdict
from quota.demand import stack_contributions
from quota.own import Ec2Instance, aws_own, gcp_own, pool_of

ROOT = Path(__file__).resolve().parents[2]
CATALOG = Catalog.load()


def _demand(stack: str) -> Any:
    config = parse_file(stack_file(stack))
    return stack_contributions(config, CATALOG, build_plan(config, CATALOG))


# --- the marks: each from its receiver's source -----------------------------------------------


def test_eks_node_group_marks_are_the_eks_tags_on_its_instances() -> None:
    # eks:cluster-name / eks:nodegroup-name on every instance of a managed node group
    # (eksctl-io/eksctl#2607; EKS "Managed node groups" resource tagging)
    marks = {m.group: dict(m.marks) for m in _demand("eks-g4dn").marks}
    assert marks["gpu-t4-20790d4b"] == {
        "eks:cluster-name": "ml",
        "eks:nodegroup-name": "gpu-t4-20790d4b",
    }
    assert {m.pool for m in _demand("eks-g4dn").marks} == {"gpu-t4", "gpu-t4-spot", "system"}


def test_karpenter_marks_are_the_tags_karpenter_puts_on_a_nodepools_instances() -> None:
    # aws/karpenter-provider-aws pkg/utils/utils.go GetTags: staticTags
    # kubernetes.io/cluster/<cluster>=owned and karpenter.sh/nodepool=<NodePool>
    marks = {m.group: dict(m.marks) for m in _demand("eks-karpenter").marks}
    assert marks["l4"] == {"kubernetes.io/cluster/karp": "owned", "karpenter.sh/nodepool": "l4"}


def test_gke_marks_are_the_labels_gke_puts_on_node_vms() -> None:
    # goog-k8s-cluster-name / goog-k8s-cluster-location / goog-k8s-node-pool-name
    # (https://cloud.google.com/billing/docs/how-to/cost-table)
    marks = {m.group: dict(m.marks) for m in _demand("gke-t4").marks}
    assert marks["gpu-t4"] == {
        "goog-k8s-cluster-name": "ml",
        "goog-k8s-cluster-location": "us-central1",
        "goog-k8s-node-pool-name": "gpu-t4",
    }
    assert set(marks) == {"gpu-t4", "system"}  # the bootstrap pool is gone once deployed


def test_an_auto_created_gke_pool_has_no_marks_its_vms_stay_others() -> None:
    # GKE names an auto-created pool itself, so no label names it in advance
    assert {m.group for m in _demand("gke-autocreate").marks} == {"system"}


def test_every_mark_must_match() -> None:
    marks = _demand("eks-g4dn").marks
    assert pool_of({"eks:cluster-name": "ml"}, marks) is None
    tags = {"eks:cluster-name": "ml", "eks:nodegroup-name": "system-ce92a2b1", "x": "y"}
    hit = pool_of(tags, marks)
    assert hit is not None and hit.pool == "system"


# --- which instances are the stack's own --------------------------------------------------------


GPU_T4 = {"eks:cluster-name": "ml", "eks:nodegroup-name": "gpu-t4-20790d4b"}


def test_aws_own_counts_tagged_instances_of_the_groups_types_under_its_codes() -> None:
    demand = _demand("eks-g4dn")
    instances = [
        Ec2Instance("g4dn.xlarge", False, GPU_T4),
        Ec2Instance("g4dn.xlarge", False, GPU_T4),
        Ec2Instance("g4dn.2xlarge", False, GPU_T4),  # not the group's type now
        Ec2Instance("g4dn.xlarge", True, GPU_T4),  # Spot: a code gpu-t4 does not draw on
    ]
    own = aws_own(instances, demand.contributions, demand.marks, {"g4dn.xlarge": 4})
    assert {k.quota: v for k, v in own["gpu-t4"].items()} == {"L-DB2E81BA": 8.0}


def test_aws_instances_inside_a_capacity_reservation_are_never_the_stacks_own() -> None:
    # "Capacity Reservations count toward your On-Demand Instance quotas, even if they are
    # unused" (EC2 User Guide): the slot stays held whatever the instance in it does.
    demand = _demand("eks-g4dn")
    inside = Ec2Instance("g4dn.xlarge", False, GPU_T4, capacity_reservation="cr-1")
    own = aws_own([inside], demand.contributions, demand.marks, {"g4dn.xlarge": 4})
    assert own == {}


def _vm(**kw: Any) -> Any:
    """A Compute Instance as the client library returns it (the fields gcp_own reads)."""
    labels = {
        "goog-k8s-cluster-name": "ml",
        "goog-k8s-cluster-location": "us-central1",
        "goog-k8s-node-pool-name": kw.pop("pool", "gpu-t4"),
    }
    disks = [SimpleNamespace(boot=True, type_="PERSISTENT", source="disk-1")]
    disks += [SimpleNamespace(boot=False, type_="SCRATCH", source="")] * kw.pop("ssds", 0)
    return SimpleNamespace(
        name="vm",
        labels=labels,
        status=kw.pop("status", "RUNNING"),
        machine_type="zones/us-central1-a/machineTypes/" + kw.pop("machine", "n1-highmem-8"),
        guest_accelerators=[
            SimpleNamespace(accelerator_type="nvidia-tesla-t4", accelerator_count=1)
        ],
        scheduling=SimpleNamespace(
            provisioning_model=kw.pop("model", "STANDARD"), preemptible=False
        ),
        disks=disks,
        network_interfaces=[
            SimpleNamespace(access_configs=[object()] if kw.pop("ip", True) else [])
        ],
    )


@pytest.mark.parametrize(
    ("vm", "gpus"),
    [
        (_vm(), 1),
        (_vm(machine="n1-standard-8"), 0),  # another machine type: a node being replaced
        (_vm(model="SPOT"), 0),  # another quota class than the pool's on-demand
        (_vm(ip=False), 0),  # another address: private nodes now
        (_vm(ssds=1), 0),
        (_vm(status="TERMINATED"), 0),
        (_vm(status="PENDING_STOP"), 1),
        (_vm(pool="other"), 0),
    ],
    ids=["match", "machine", "spot", "no-ip", "ssd", "terminated", "pending-stop", "pool"],
)
def test_a_gce_vm_is_its_pools_own_only_in_the_pools_planned_shape(vm: Any, gpus: int) -> None:
    demand = _demand("gke-t4")
    own = gcp_own(
        [vm], {"disk-1": ("pd-balanced", 100)}, demand.contributions, demand.marks, CATALOG
    )
    got = {k.quota: v for k, v in own.get("gpu-t4", {}).items()}
    assert got.get("NVIDIA_T4_GPUS", 0) == gpus


def test_a_gce_boot_disk_counts_only_when_listed_with_the_pools_type_and_size() -> None:
    demand = _demand("gke-t4")
    for disks, gb in (
        ({"disk-1": ("pd-balanced", 100)}, 100),
        ({"disk-1": ("pd-standard", 100)}, 0),
        ({}, 0),  # disks unread: not the stack's
    ):
        own = gcp_own([_vm()], disks, demand.contributions, demand.marks, CATALOG)
        got = {k.quota: v for k, v in own["gpu-t4"].items()}
        assert got.get("SSD_TOTAL_GB", 0) == gb and got["NVIDIA_T4_GPUS"] == 1


# --- own usage in the verdict and the request ---------------------------------------------------


def test_gke_t4_at_20_nodes_limit_21_is_ok_and_limit_15_asks_21() -> None:
    # needed 21 (20 + surge 1), 20 running: 1 more
    running = Reading(limit=21, usage=20)
    assert verdict(21, running, own=20, surge=1)[0] == "ok"
    assert desired_value(21, Reading(limit=15, usage=20), own=20, surge=1) == 21
    assert desired_value(21, Reading(limit=15, usage=20)) == 41  # the double count, without


def test_own_offsets_at_most_the_usage_and_never_the_surge() -> None:
    assert counted_own(21, usage=5, own=20, surge=1) == 5  # the usage lags the VMs
    assert counted_own(11, usage=30, own=20, surge=1) == 10  # a pool shrunk below what runs
    assert counted_own(21, usage=30, own=None, surge=1) == 0  # unread: counted as others'
    # shrinking: the upgrade's surge still comes on top of whatever runs
    assert verdict(11, Reading(limit=30, usage=30), own=20, surge=1)[0] == "short"
