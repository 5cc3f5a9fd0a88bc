"""The EKS managed add-ons a created cluster gets, each pinned for its Kubernetes minor.

Pure code: VPC CNI, kube-proxy, CoreDNS, the node monitoring agent, the EBS CSI driver (with its
IAM role) and, with Pod Identity, its agent; an existing cluster keeps its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from infra.core.eks import versions
from infra.core.eks.access import managed_policy_arn

# The EBS CSI driver add-on's controller service account and managed policy
# (https://docs.aws.amazon.com/eks/latest/userguide/ebs-csi.html).
EBS_CSI_SERVICE_ACCOUNT = "ebs-csi-controller-sa"


EBS_CSI_POLICY = "service-role/AmazonEBSCSIDriverPolicy"


@dataclass(frozen=True, slots=True, kw_only=True)
class EksAddonPlan:
    """One EKS managed add-on.

    Attributes:
        name: the add-on name (``aws eks describe-addon-versions``).
        service_account: the add-on's service account that gets an IAM role (or ``None``).
        policy_arn: the managed policy of that role.
        version: the version pinned for the cluster's Kubernetes minor
            (``eks_addon_versions.csv``); ``""``: EKS's default for it, read at deploy time.
    """

    name: str
    service_account: str | None = None
    policy_arn: str | None = None
    version: str = ""


def plan_addons(
    partition: str, existing: bool, identity: str, kubernetes_version: str, data_dir: Path
) -> tuple[EksAddonPlan, ...]:
    """Managed add-ons a new cluster needs, each at the version ``data_dir``'s catalog pins for
    ``kubernetes_version``; an existing cluster keeps its own.

    VPC CNI, kube-proxy and CoreDNS are what every cluster runs ("Amazon EKS add-ons",
    https://docs.aws.amazon.com/eks/latest/userguide/eks-add-ons.html); the EBS CSI driver makes
    gp3 PersistentVolumes; eks-node-monitoring-agent sets the AcceleratedHardwareReady condition
    (NVIDIA XID errors) that node auto repair acts on ("Detect node health issues and enable
    automatic node repair", https://docs.aws.amazon.com/eks/latest/userguide/node-health.html;
    its DaemonSet tolerates every taint, so it reaches tainted GPU nodes: aws/eks-node-monitoring-agent
    charts/eks-node-monitoring-agent/values.yaml ``tolerations: [{operator: Exists}]``);
    eks-pod-identity-agent serves Pod Identity associations.
    """
    if existing:  # its add-ons are its owner's (Pod Identity's agent: live.attached_cluster)
        return ()
    addons = [
        EksAddonPlan(name="vpc-cni"),
        EksAddonPlan(name="kube-proxy"),
        EksAddonPlan(name="coredns"),
        EksAddonPlan(name="eks-node-monitoring-agent"),
        EksAddonPlan(
            name="aws-ebs-csi-driver",
            service_account=EBS_CSI_SERVICE_ACCOUNT,
            policy_arn=managed_policy_arn(partition, EBS_CSI_POLICY),
        ),
    ]
    if identity == "pod-identity":
        addons.insert(0, EksAddonPlan(name="eks-pod-identity-agent"))
    return tuple(
        replace(a, version=versions.addon_version(a.name, kubernetes_version, data_dir))
        for a in addons
    )
