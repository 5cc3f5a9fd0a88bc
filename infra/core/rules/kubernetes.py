"""Field rules for Kubernetes object names, labels, namespaces and taints (as the API server checks them)."""

from __future__ import annotations

from collections.abc import Mapping

from infra.core.errors import RuleError, shown
from infra.core.rules._common import (
    _RE_DNS1123_LABEL,
    _RE_DNS1123_SUBDOMAIN,
    _RE_QUALIFIED_NAME,
    _matching,
)
from infra.core.rules.limits import limit

check_dns1123_label = _matching(
    "check_dns1123_label",
    _RE_DNS1123_LABEL,
    "is not a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a "
    "letter or digit, at most 63 characters",
    max_len=limit("k8s.dns1123_label"),
    doc="A DNS-1123 label: Namespace names, most object names (apimachinery IsDNS1123Label).",
)


check_dns1123_subdomain = _matching(
    "check_dns1123_subdomain",
    _RE_DNS1123_SUBDOMAIN,
    "is not a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', each part starting "
    "and ending with a letter or digit, at most 253 characters",
    max_len=limit("k8s.dns1123_subdomain"),
    doc="A DNS-1123 subdomain: Node and RuntimeClass names (apimachinery IsDNS1123Subdomain).",
)


def check_qualified_name(v: str, what: str = "label key") -> str:
    """``[prefix/]name``: label, annotation and taint keys (apimachinery IsQualifiedName)."""
    prefix, slash, name = v.rpartition("/")
    problems = []
    if slash and (not prefix or len(prefix) > 253 or not _RE_DNS1123_SUBDOMAIN.fullmatch(prefix)):
        problems.append("its prefix must be a DNS-1123 subdomain (lowercase, at most 253)")
    if (
        not name
        or len(name) > limit("k8s.qualified_name")
        or not _RE_QUALIFIED_NAME.fullmatch(name)
    ):
        problems.append(
            "its name must be at most 63 letters, digits, '-', '_' or '.', starting and ending "
            "with a letter or digit"
        )
    if problems:
        raise ValueError(f"{shown(v)} is not a valid {what}: {'; '.join(problems)}")
    return v


def check_label_value(v: str, what: str = "label value") -> str:
    """Empty, or at most 63 alphanumerics, '-', '_', '.' (apimachinery IsValidLabelValue)."""
    if v and (len(v) > limit("k8s.label_value") or not _RE_QUALIFIED_NAME.fullmatch(v)):
        raise ValueError(
            f"{shown(v)} is not a valid {what}: at most 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit (or empty)"
        )
    return v


def check_labels(v: Mapping[str, str]) -> Mapping[str, str]:
    """Kubernetes labels: qualified-name keys and label values (apimachinery ValidateLabels)."""
    for key, value in v.items():
        try:
            check_qualified_name(key)
            check_label_value(value)
        except ValueError as e:
            raise RuleError(str(e), at=(key,)) from None
    return v


# kubelet --node-labels: in the kubernetes.io / k8s.io namespaces a node may only self-set
# [*.]kubelet.kubernetes.io/*, [*.]node.kubernetes.io/* and these (k8s.io/kubernetes
# pkg/kubelet/apis/well_known_labels.go, IsKubeletLabel; KEP "Bounding Self-Labeling Kubelets").
_NODE_LABEL_ALLOWED_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
_NODE_LABEL_ALLOWED = frozenset(
    {
        "beta.kubernetes.io/arch",
        "beta.kubernetes.io/instance-type",
        "beta.kubernetes.io/os",
        "failure-domain.beta.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "kubernetes.io/arch",
        "kubernetes.io/hostname",
        "kubernetes.io/os",
        "node.kubernetes.io/instance-type",
        "topology.kubernetes.io/region",
        "topology.kubernetes.io/zone",
    }
)


def _in_namespace(prefix: str, domain: str) -> bool:
    return prefix == domain or prefix.endswith("." + domain)


def check_node_labels(v: Mapping[str, str]) -> Mapping[str, str]:
    """Labels put on nodes: Kubernetes label rules, and the kubelet's --node-labels restriction."""
    check_labels(v)
    for key in v:
        prefix = key.rpartition("/")[0]
        restricted = _in_namespace(prefix, "kubernetes.io") or _in_namespace(prefix, "k8s.io")
        allowed = key in _NODE_LABEL_ALLOWED or any(
            _in_namespace(prefix, ns) for ns in _NODE_LABEL_ALLOWED_NAMESPACES
        )
        if restricted and not allowed:
            raise RuleError(
                f"{shown(key)}: the kubelet refuses node labels in the kubernetes.io/k8s.io "
                "namespaces except kubelet.kubernetes.io/*, node.kubernetes.io/* and the "
                "well-known topology labels",
                at=(key,),
            )
    return v


# EKS managed node groups: label keys and values 1-63 characters, the key counted whole, prefix
# included (https://docs.aws.amazon.com/eks/latest/APIReference/API_UpdateLabelsPayload.html);
# "Label cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]"
# (InvalidParameterException quoted in eksctl-io/eksctl#4007; aws/containers-roadmap#1451).
EKS_RESERVED_LABEL_PREFIXES = ("kubernetes.io/", "k8s.io/", "eks.amazonaws.com/")
EKS_MAX_LABEL = limit("eks.label")


def check_eks_node_labels(v: Mapping[str, str]) -> Mapping[str, str]:
    """EKS node-group labels: the EKS API's lengths and reserved prefixes, then node-label rules."""
    for key, value in v.items():
        if len(key) > EKS_MAX_LABEL:
            raise RuleError(
                f"{shown(key)} is {len(key)} characters; EKS takes label keys of at most "
                f"{EKS_MAX_LABEL}, prefix included",
                at=(key,),
            )
        if value == "" or len(value) > EKS_MAX_LABEL:
            raise RuleError(
                f"{shown(value)}: EKS takes label values of 1-{EKS_MAX_LABEL} characters "
                "(an empty value is refused)",
                at=(key,),
            )
        if reserved := next((p for p in EKS_RESERVED_LABEL_PREFIXES if p in key), None):
            raise RuleError(
                f"{shown(key)}: EKS refuses node-group labels containing the reserved prefix "
                f"{reserved} (reserved: {', '.join(EKS_RESERVED_LABEL_PREFIXES)})",
                at=(key,),
            )
    return check_node_labels(v)


# EKS Taint: key 1-63 characters, value 0-63
# (https://docs.aws.amazon.com/eks/latest/APIReference/API_Taint.html); kubernetes.io/ keys are
# reserved (alphagov/govuk-infrastructure#1264: EKS refuses a kubernetes.io/ taint key).
def check_eks_taint_key(v: str) -> str:
    """An EKS node-group taint key: a Kubernetes taint key of at most 63 characters in all."""
    check_taint_key(v)
    if len(v) > EKS_MAX_LABEL:
        raise ValueError(
            f"{shown(v)} is {len(v)} characters; EKS takes taint keys of at most "
            f"{EKS_MAX_LABEL}, prefix included"
        )
    if "kubernetes.io/" in v:
        raise ValueError(
            f"{shown(v)}: EKS refuses taint keys with the reserved kubernetes.io/ prefix"
        )
    return v


# Pod Security Admission reads these namespace labels: https://kubernetes.io/docs/concepts/security/pod-security-admission/
POD_SECURITY_PREFIX = "pod-security.kubernetes.io/"


def check_gpu_namespace_labels(v: Mapping[str, str]) -> Mapping[str, str]:
    """A GPU namespace's user labels: Kubernetes label rules, and no pod-security override."""
    check_labels(v)
    for key in v:
        if key.startswith(POD_SECURITY_PREFIX):
            raise RuleError(
                f"{shown(key)}: gpu-infra enforces Pod Security baseline on GPU namespaces; "
                f"labels under {POD_SECURITY_PREFIX} are not accepted here (a workload namespace "
                "must not make itself privileged)",
                at=(key,),
            )
    return v


# Namespaces every cluster shares (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/#initial-namespaces):
# the privileged operator namespace must be one of its own, and "kube-" is reserved for the system.
SHARED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# PriorityClasses Kubernetes creates; other names with this prefix are refused
# (k8s.io/kubernetes pkg/apis/scheduling/validation ValidatePriorityClass).
SYSTEM_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")


def check_namespace(v: str) -> str:
    """A Namespace name: a DNS-1123 label (apimachinery ValidateNamespaceName)."""
    return check_dns1123_label(v)


def check_operator_namespace(v: str) -> str:
    """The GPU Operator's namespace is labelled privileged: never a namespace others share."""
    check_dns1123_label(v)
    if v in SHARED_NAMESPACES or v.startswith("kube-"):
        raise ValueError(
            f"{shown(v)} is shared by other workloads; the GPU Operator's namespace is labelled "
            "pod-security privileged, so it must be its own (default: gpu-operator)"
        )
    return v


def check_taint_key(v: str) -> str:
    """Taint keys follow label-key rules (k8s.io/kubernetes pkg/apis/core/validation ValidateTaints)."""
    return check_qualified_name(v, "taint key")


def check_taint_value(v: str) -> str:
    """Taint values follow label-value rules (pkg/apis/core/validation ValidateTaints)."""
    return check_label_value(v, "taint value")
