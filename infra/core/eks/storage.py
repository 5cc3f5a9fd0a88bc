"""Node storage of EKS GPU groups: the volume a launch template sizes, and what of it pods get.

Pure code: the data volume per AMI type, and the nodefs capacity and allocatable ephemeral storage
a node of a given disk reports (filesystem overheads, kubeReserved, hard eviction), from which the
cluster-autoscaler node template advertises ``ephemeral-storage``.
"""

from __future__ import annotations

import math


def data_volume_device(ami_type: str) -> str:
    """The volume a launch template sizes for images and pods: Bottlerocket's second (data)
    volume /dev/xvdb, else the root volume /dev/xvda (Bottlerocket "Default Volumes",
    https://github.com/bottlerocket-os/bottlerocket#default-volumes)."""
    return "/dev/xvdb" if ami_type.startswith("BOTTLEROCKET") else "/dev/xvda"


# What the kubelet's nodefs capacity (the filesystem's statfs f_blocks, cAdvisor) lacks against
# the disk, at most. XFS leaves its internal log out of f_blocks (linux fs/xfs/xfs_super.c
# xfs_fs_statfs: "f_blocks = sb_dblocks - lsize"), and a log never exceeds XFS_MAX_LOG_BYTES,
# 2 GiB - 10 MiB (fs/xfs/libxfs/xfs_fs.h); AL2023's root filesystem is made at the AMI's few GiB
# (a log of MiB) and grown at boot, so the same 2 GiB also covers its GPT and boot partitions.
XFS_OVERHEAD_GIB = 2
# ext4 leaves its metadata out of f_blocks (fs/ext4/super.c ext4_statfs, s_overhead_clusters):
# inode tables of 256 bytes per 16 KiB (e2fsprogs misc/mke2fs.conf.in inode_size, inode_ratio)
# and a journal of at most 1 GiB (lib/ext2fs/mkjournal.c ext2fs_default_journal_size).
EXT4_INODE_TABLE_SHARE = 256 / 16384
EXT4_JOURNAL_MAX_GIB = 1
# mdadm v1.2 superblocks reserve up to 128 MiB ahead of the data on each member (mdadm super1.c
# headroom); the NVIDIA types with EFA have at most 8 instance-store NVMe disks.
MD_RAID_OVERHEAD_GIB = 8 * 128 / 1024
# AL2023 nodeadm's kubelet config: kubeReserved ephemeral-storage 1Gi and evictionHard
# nodefs.available 10% (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go
# withDefaultReservedResources, defaultKubeletSubConfig). Bottlerocket: the kubelet's default hard
# eviction nodefs.available<10% (https://kubernetes.io/docs/concepts/scheduling-eviction/
# node-pressure-eviction/#hard-eviction-thresholds) and settings.kubernetes.kube-reserved's
# ephemeral-storage default 1Gi (https://bottlerocket.dev/en/os/latest/api/settings/kubernetes/).
KUBE_RESERVED_EPHEMERAL_GIB = 1
EVICTION_NODEFS_AVAILABLE = 0.10


def nodefs_capacity_gib(disk_gib: float, ami_type: str, raid0: bool = False) -> float:
    """The least nodefs capacity (GiB) a node reports for a ``disk_gib`` disk: XFS on AL2023
    (root volume, or the RAID0 of the instance store made by ``setup-local-disks`` with
    ``mkfs.xfs``); ext4 or XFS on Bottlerocket's data volume (a variant picks the filesystem of
    its data partition), so the larger of both losses."""
    if ami_type.startswith("BOTTLEROCKET"):
        ext4 = disk_gib * EXT4_INODE_TABLE_SHARE + EXT4_JOURNAL_MAX_GIB
        return max(0.0, disk_gib - max(ext4, XFS_OVERHEAD_GIB))
    return max(0.0, disk_gib - XFS_OVERHEAD_GIB - (MD_RAID_OVERHEAD_GIB if raid0 else 0))


def allocatable_ephemeral_gib(capacity_gib: float) -> float:
    """The kubelet's allocatable ephemeral storage for a nodefs of ``capacity_gib``: capacity
    minus kubeReserved minus the hard eviction threshold (https://kubernetes.io/docs/tasks/
    administer-cluster/reserve-compute-resources/#node-allocatable)."""
    reserved = KUBE_RESERVED_EPHEMERAL_GIB + capacity_gib * EVICTION_NODEFS_AVAILABLE
    return max(0.0, capacity_gib - reserved)


def ephemeral_storage_gi(disk_gib: float, ami_type: str = "AL2023", raid0: bool = False) -> int:
    """The CA template's ephemeral storage (whole GiB, rounded down): never more than a node of
    this disk has allocatable, so a pod the template admits fits the node it scales up."""
    return math.floor(allocatable_ephemeral_gib(nodefs_capacity_gib(disk_gib, ami_type, raid0)))
