"""Pool labels and taints as each receiver takes them: an EKS node group (the EKS API), a
Karpenter NodePool (its CRD), a node patched on an existing cluster (the Kubernetes API).

Sources: EKS ``UpdateLabelsPayload`` and ``Taint`` (label keys and values 1-63, taint values 0-63,
https://docs.aws.amazon.com/eks/latest/APIReference/API_Taint.html); the vendored
``karpenter.sh_nodepools`` CRD (template label values ``^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$``
maxLength 63, so empty is allowed; ``taints[].value`` needs one character, so an empty value is
left out; the ``karpenter.sh`` / ``karpenter.k8s.aws`` label domains restricted); apimachinery
``IsValidLabelValue`` (empty allowed) for Nodes.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from infra.core.config.stack import parse
from infra.core.eks.platform import eks_plan
from infra.core.errors import ConfigErrors
from infra.core.plan import Plan, build_plan
from tests.unit.test_karpenter_pools import BASE as KARPENTER

NODE_GROUP: dict[str, Any] = {
    **copy.deepcopy(KARPENTER),
    "gpu-infra:cluster": {"name": "ml", "location": "us-west-2", "kubernetesVersion": "1.35"},
}
KEY_64 = "example.com/" + "k" * 52  # a valid qualified name of 64 characters in all
KEY_63 = "example.com/" + "k" * 51


def _plan(base: dict[str, Any], **pool: Any) -> Plan:
    cfg = copy.deepcopy(base)
    cfg["gpu-infra:gpuPools"][0].update(pool)
    return build_plan(parse(cfg, "t"))


def _refused_at(base: dict[str, Any], path: str, **pool: Any) -> str | None:
    try:
        _plan(base, **pool)
    except ConfigErrors as e:
        return next((i.reason for i in e.issues if i.path.startswith(path)), None)
    return None


# (key, value, accepted by an EKS node group, accepted by a Karpenter NodePool)
LABELS = [
    ("team", "ml", True, True),
    ("team", "", False, True),  # EKS: 1-63; the NodePool's pattern takes the empty value
    ("team", "v" * 63, True, True),
    ("team", "v" * 64, False, False),  # both: at most 63
    (KEY_63, "x", True, True),
    (KEY_64, "x", False, True),  # EKS counts the prefix in its 63; Kubernetes does not
    ("eks.amazonaws.com/team", "x", False, True),  # EKS's reserved prefix
    ("karpenter.sh/team", "x", True, False),  # the NodePool CRD's restricted domain
    ("karpenter.k8s.aws/team", "x", True, False),
]


@pytest.mark.parametrize(("key", "value", "node_group", "node_pool"), LABELS)
def test_pool_label_is_refused_exactly_where_its_receiver_refuses_it(
    key, value, node_group, node_pool
):
    at = f"gpuPools[0].labels.{key}"
    for base, ok in ((NODE_GROUP, node_group), (KARPENTER, node_pool)):
        reason = _refused_at(base, at, labels={key: value})
        assert (reason is None) == ok, (base is KARPENTER, reason)


# (key, value, accepted by an EKS node group, accepted by a Karpenter NodePool)
TAINTS = [
    ("team", "", True, True),  # a taint value may be empty for both
    ("team", "v" * 63, True, True),
    ("team", "v" * 64, False, False),
    (KEY_64, "x", False, True),  # EKS: taint keys at most 63 in all
    ("node.kubernetes.io/team", "x", False, True),  # EKS reserves kubernetes.io/ taint keys
]


@pytest.mark.parametrize(("key", "value", "node_group", "node_pool"), TAINTS)
def test_pool_taint_is_refused_exactly_where_its_receiver_refuses_it(
    key, value, node_group, node_pool
):
    taints = [{"key": key, "value": value}]
    for base, ok in ((NODE_GROUP, node_group), (KARPENTER, node_pool)):
        reason = _refused_at(base, "gpuPools[0].taints[0]", taints=taints)
        assert (reason is None) == ok, (base is KARPENTER, reason)


def test_an_empty_taint_value_is_left_out_of_the_nodepool_not_sent_empty():
    p = _plan(KARPENTER, taints=[{"key": "team", "effect": "NoExecute"}])
    (g,) = eks_plan(p.platform).groups
    assert g.karpenter is not None
    sent = g.karpenter.node_pool["spec"]["template"]["spec"]["taints"]
    assert {"key": "team", "effect": "NoExecute"} in sent
    assert all(t.get("value") != "" for t in sent)


def test_an_empty_taint_value_is_sent_to_an_eks_node_group_which_takes_0_to_63():
    p = _plan(NODE_GROUP, taints=[{"key": "team", "effect": "NoExecute"}])
    (g,) = eks_plan(p.platform).groups
    assert any(t.key == "team" and t.value == "" for t in g.taints)


def test_a_nodepool_crd_finding_names_the_config_key_behind_the_manifest_field():
    reason = _refused_at(
        KARPENTER, "gpuPools[0].labels.karpenter.sh/team", labels={"karpenter.sh/team": "x"}
    )
    assert reason == (
        "the NodePool a10g would be refused at spec.template.metadata.labels.karpenter.sh/team: "
        'label domain "karpenter.sh" is restricted'
    )


@pytest.mark.parametrize(
    ("kind", "crd_path", "key"),
    [
        ("NodePool", "spec.template.spec.taints.2.value", "gpuPools[3].taints[1]"),
        ("NodePool", "spec.template.spec.taints.0.key", "gpuPools[3]"),  # gpu-infra's GPU taint
        (
            "NodePool",
            "spec.template.metadata.labels.example.com/a.b",
            "gpuPools[3].labels.example.com/a.b",
        ),
        (
            "NodePool",
            "spec.template.spec.terminationGracePeriod",
            "cluster.autoscaler.terminationGracePeriod",
        ),
        (
            "NodePool",
            "spec.disruption.consolidateAfter",
            "cluster.autoscaler.scaleDownUnneededTime",
        ),
        ("EC2NodeClass", "spec.amiSelectorTerms.0.alias", "gpuPools[3].amiFamily"),
        ("NodePool", "spec.weight", "gpuPools[3]"),
    ],
)
def test_each_crd_path_is_named_by_the_config_key_that_sets_it(kind, crd_path, key):
    from infra.core.eks.karpenter.pools import config_key_of

    assert config_key_of(3, kind, crd_path) == key
