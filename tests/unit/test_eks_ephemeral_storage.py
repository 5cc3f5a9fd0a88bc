"""The autoscaler's ephemeral-storage template never promises more than a node has allocatable:
nodefs capacity is the filesystem (less XFS's log, ext4's metadata), then the kubelet's reserve."""

from __future__ import annotations

import functools
from fractions import Fraction
from pathlib import Path

import pytest

from infra.core.config.stack import load_stack_file, parse
from infra.core.eks.storage import allocatable_ephemeral_gib, ephemeral_storage_gi
from infra.core.plan import Plan, build_plan
from infra.core.scheduling.predicates import Pod, fit_problems
from infra.core.scheduling.proof import pool_nodes

STACKS = sorted(Path(__file__).resolve().parents[2].joinpath("stacks").glob("Pulumi.eks-*.yaml"))
GI = 2**30


@functools.cache
def sample(path: Path) -> Plan:
    name, raw = load_stack_file(path)
    return build_plan(parse(raw, name))


def test_a_100_gib_al2023_disk_with_a_64_mib_xfs_log_and_boot_partitions_has_the_template_free():
    # mkfs.xfs at the AMI's size makes a 64 MiB log (xfsprogs minimum); GPT, BIOS boot (1 MiB)
    # and EFI (10 MiB) partitions; 0.9 x disk - 1 GiB (the old template, 89Gi) overstates it.
    capacity = 100 - (64 + 12) / 1024
    real = allocatable_ephemeral_gib(capacity)
    assert ephemeral_storage_gi(100, "AL2023_x86_64_NVIDIA") <= real < 89


@pytest.mark.parametrize("disk", [20, 100, 500, 1000, 4096, 16384])
def test_bottlerocket_template_fits_an_ext4_data_partition_with_a_1_gib_journal(disk):
    # ext4 with mke2fs defaults: 256-byte inodes per 16 KiB and up to a 1 GiB journal.
    capacity = disk - disk / 64 - 1
    template = ephemeral_storage_gi(disk, "BOTTLEROCKET_x86_64_NVIDIA")
    assert template <= allocatable_ephemeral_gib(capacity)


@pytest.mark.parametrize("disk", [20, 100, 500, 4096, 65536])
def test_template_fits_an_xfs_with_the_largest_log_xfs_makes(disk):
    capacity = disk - 2  # XFS_MAX_LOG_BYTES is just under 2 GiB
    for ami in ("AL2023_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA"):
        assert ephemeral_storage_gi(disk, ami) <= allocatable_ephemeral_gib(capacity)
    # A RAID0 of the instance store loses the md superblocks' headroom too (8 x 128 MiB).
    raid = allocatable_ephemeral_gib(capacity - 1)
    assert ephemeral_storage_gi(disk, "AL2023_x86_64_NVIDIA", raid0=True) <= raid


def test_a_pod_requesting_the_templates_ephemeral_storage_fits_the_running_node():
    checked = 0
    for path in STACKS:  # every sample EKS group the cluster-autoscaler scales from zero
        for name, nodes in pool_nodes(sample(path)).items():
            if nodes.template is None or "ephemeral-storage" not in nodes.template.allocatable:
                continue
            want = nodes.template.allocatable["ephemeral-storage"]
            pod = Pod(name, {}, None, ({"operator": "Exists"},), {"ephemeral-storage": want})
            assert not fit_problems(pod, nodes.template)
            assert not fit_problems(pod, nodes.running), (path.name, name)
            # ... and stays within a GiB of it: the template rounds down, it does not guess low.
            assert nodes.running.allocatable["ephemeral-storage"] < want + GI
            more = Pod(name, {}, None, ({"operator": "Exists"},), {"ephemeral-storage": want + GI})
            assert fit_problems(more, nodes.template)
            checked += 1
    assert checked >= 5, checked


def test_running_node_ephemeral_storage_is_in_bytes():
    plan = sample(next(p for p in STACKS if p.name == "Pulumi.eks-g4dn.yaml"))
    running = next(iter(pool_nodes(plan).values())).running
    assert (
        running.allocatable["ephemeral-storage"]
        == Fraction(allocatable_ephemeral_gib(100 - 2)) * GI
    )
