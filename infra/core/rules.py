"""Field rules: every stack-file value checked as the API that receives it would check it.

One place per rule. Each rule is a plain function ``check_*(value) -> value`` raising ``ValueError``
with the reason (value shortened, rule named) and an ``Annotated`` type the config schemas use.
Each cites its primary source in a one-line comment; tests/unit/test_config_rules.py has a test
named after each.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import AfterValidator

from infra.core.errors import RuleError, did_you_mean, shown

# --- Kubernetes object names and labels --------------------------------------------------------
# k8s.io/apimachinery/pkg/util/validation/validation.go: dns1123LabelFmt, DNS1123LabelMaxLength.
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
# validation.go: dns1123SubdomainFmt, DNS1123SubdomainMaxLength = 253.
_DNS1123_SUBDOMAIN = rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*"
# validation.go: qualifiedNameFmt ("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"), max 63.
_QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
# GCE resource names (RFC 1035): https://cloud.google.com/compute/docs/naming-resources
_RFC1035_LABEL = r"[a-z]([-a-z0-9]*[a-z0-9])?"


def _full(pattern: str) -> re.Pattern[str]:
    # Used with fullmatch: Python's "$" also matches before a final "\n", Go's regexp (which the
    # API servers run) does not. ASCII: Python's \w and \d also match non-ASCII letters and digits.
    return re.compile(pattern, re.ASCII)


_RE_DNS1123_LABEL = _full(_DNS1123_LABEL)
_RE_DNS1123_SUBDOMAIN = _full(_DNS1123_SUBDOMAIN)
_RE_QUALIFIED_NAME = _full(_QUALIFIED_NAME)
_RE_RFC1035_LABEL = _full(_RFC1035_LABEL)


def _rule(check: Callable[[Any], Any]) -> AfterValidator:
    return AfterValidator(check)


def check_dns1123_label(v: str) -> str:
    """A DNS-1123 label: Namespace names, most object names (apimachinery IsDNS1123Label)."""
    if len(v) > 63 or not _RE_DNS1123_LABEL.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a DNS-1123 label: lowercase letters, digits and '-', starting and "
            "ending with a letter or digit, at most 63 characters"
        )
    return v


def check_dns1123_subdomain(v: str) -> str:
    """A DNS-1123 subdomain: Node and RuntimeClass names (apimachinery IsDNS1123Subdomain)."""
    if len(v) > 253 or not _RE_DNS1123_SUBDOMAIN.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', "
            "each part starting and ending with a letter or digit, at most 253 characters"
        )
    return v


def check_qualified_name(v: str, what: str = "label key") -> str:
    """``[prefix/]name``: label, annotation and taint keys (apimachinery IsQualifiedName)."""
    prefix, slash, name = v.rpartition("/")
    problems = []
    if slash and (not prefix or len(prefix) > 253 or not _RE_DNS1123_SUBDOMAIN.fullmatch(prefix)):
        problems.append("its prefix must be a DNS-1123 subdomain (lowercase, at most 253)")
    if not name or len(name) > 63 or not _RE_QUALIFIED_NAME.fullmatch(name):
        problems.append(
            "its name must be at most 63 letters, digits, '-', '_' or '.', starting and ending "
            "with a letter or digit"
        )
    if problems:
        raise ValueError(f"{shown(v)} is not a valid {what}: {'; '.join(problems)}")
    return v


def check_label_value(v: str, what: str = "label value") -> str:
    """Empty, or at most 63 alphanumerics, '-', '_', '.' (apimachinery IsValidLabelValue)."""
    if v and (len(v) > 63 or not _RE_QUALIFIED_NAME.fullmatch(v)):
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
EKS_MAX_LABEL = 63


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
                f"{shown(key)}: GPU namespaces keep the cluster's pod security level; "
                f"labels under {POD_SECURITY_PREFIX} are not accepted here (a workload namespace "
                "must not make itself privileged)",
                at=(key,),
            )
    return v


# Namespaces every cluster shares (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/#initial-namespaces):
# the privileged operator namespace must be one of its own, and "kube-" is reserved for the system.
SHARED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


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


# --- Container images ---------------------------------------------------------------------------
# github.com/distribution/reference regexp.go: domain, path components, tag and digest grammar.
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_RE_IMAGE = _full(
    rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?::{_TAG})?(?:@{_DIGEST})?"
)


def check_image_reference(v: str) -> str:
    """``[registry/]repo[:tag][@digest]`` as container runtimes parse it (distribution/reference)."""
    name = v.split("@", 1)[0]
    if name.rfind(":") > name.rfind("/"):
        name = name[: name.rfind(":")]  # drop the tag, not a registry port
    if len(v) > 512 or not _RE_IMAGE.fullmatch(v) or len(name) > 255:  # NameTotalLengthMax = 255
        raise ValueError(
            f"{shown(v)} is not an image reference: registry/repository[:tag][@digest], "
            "lowercase repository path, no spaces or shell characters"
        )
    return v


_RE_IMAGE_REPOSITORY = _full(rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*")
_RE_TAG_OR_DIGEST = _full(rf"{_TAG}|{_DIGEST}")


def check_image_repository(v: str) -> str:
    """``registry/path`` without tag (the chart's ``*.repository``; distribution/reference)."""
    if len(v) > 255 or not _RE_IMAGE_REPOSITORY.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not an image repository: registry/path, lowercase path, no tag, "
            "spaces or shell characters"
        )
    return v


def check_image_tag(v: str) -> str:
    """An image tag (``v25.3.0``) or digest (``sha256:...``), as the chart's ``*.version``."""
    if not _RE_TAG_OR_DIGEST.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not an image tag (letters, digits, '_', '.', '-', at most 128) or "
            "digest (sha256:...)"
        )
    return v


def check_operator_values(v: Mapping[str, Any]) -> Mapping[str, Any]:
    """Image fields in free-form chart values: ``*.repository``, ``*.image``, ``*.version`` (an
    image tag wherever the chart has one; "" leaves the chart default) and
    ``operator.runtimeClass`` (gpu-operator values.yaml names them so)."""

    def walk(node: Any, at: tuple[str | int, ...]) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, (*at, i))
            return
        if not isinstance(node, Mapping):
            return
        for key, value in node.items():
            here = (*at, key)
            try:
                if isinstance(value, str):
                    if key == "repository":
                        check_image_repository(value)
                    elif key == "image":
                        check_image_reference(value)
                    elif key == "version" and value:  # every chart `version` is an image tag
                        check_image_tag(value)
                    elif here == ("operator", "runtimeClass"):
                        check_runtime_class(value)
            except ValueError as e:
                raise RuleError(str(e), at=here) from None
            walk(value, here)

    walk(v, ())
    return v


# --- Paths --------------------------------------------------------------------------------------
# A path the toolkit or a node tool uses: absolute (the toolkit container mounts host paths), clean,
# and bounded (Linux PATH_MAX is 4096; no real config path is near it).
MAX_PATH = 1024
_PATH_FORBIDDEN = re.compile(r"[\s;|&$`'\"<>()*?\\!{}\[\]#~]")


def check_host_path(v: str, *, allow_home: bool = False) -> str:
    """An absolute, normalised path without whitespace, shell characters or '..' parts."""
    if len(v) > MAX_PATH:
        raise ValueError(f"a path of {len(v)} characters is longer than {MAX_PATH}")
    body = v[2:] if allow_home and v.startswith("~/") else v
    if bad := _PATH_FORBIDDEN.search(body):
        raise ValueError(
            f"{shown(v)} contains {bad.group()!r}; paths take no spaces or shell characters"
        )
    if not (v.startswith("/") or (allow_home and v.startswith("~/"))):
        raise ValueError(
            f"{shown(v)} is not an absolute path" + (" (or ~/...)" if allow_home else "")
        )
    parts = body.split("/")
    if ".." in parts or "." in parts[1:] or "//" in body or (len(body) > 1 and body.endswith("/")):
        raise ValueError(f"{shown(v)} is not a clean path (no '.', '..', '//' or trailing '/')")
    return v


def check_kubeconfig_path(v: str) -> str:
    """A kubeconfig file path: absolute or ``~/``-relative (the Kubernetes provider expands ``~``)."""
    return check_host_path(v, allow_home=True)


# A RuntimeClass's name is a DNS-1123 subdomain and its handler a DNS-1123 label
# (https://kubernetes.io/docs/concepts/containers/runtime-class/); the operator uses one value for
# both (operator.runtimeClass), so it must be a label.
def check_runtime_class(v: str) -> str:
    """A RuntimeClass name the operator also uses as the containerd handler."""
    try:
        return check_dns1123_label(v)
    except ValueError:
        raise ValueError(
            f"{shown(v)} is not a RuntimeClass handler name: a DNS-1123 label (lowercase letters, "
            "digits and '-', at most 63 characters)"
        ) from None


# toolkit.env variables whose values are host paths, listed by name (a suffix guess misread the
# boolean CONTAINERD_USE_LEGACY_CONFIG): NVIDIA/gpu-operator controllers/object_controls.go sets
# RUNTIME_CONFIG, CONTAINERD_CONFIG, RUNTIME_SOCKET, CONTAINERD_SOCKET, RUNTIME_DROP_IN_CONFIG and
# RUNTIME_DROP_IN_CONFIG_HOST_PATH; NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk-installer reads
# HOST_ROOT_MOUNT and DOCKER_CONFIG / DOCKER_SOCKET.
_PATH_ENV = frozenset(
    {
        "RUNTIME_CONFIG",
        "CONTAINERD_CONFIG",
        "DOCKER_CONFIG",
        "RUNTIME_SOCKET",
        "CONTAINERD_SOCKET",
        "DOCKER_SOCKET",
        "RUNTIME_DROP_IN_CONFIG",
        "RUNTIME_DROP_IN_CONFIG_HOST_PATH",
        "HOST_ROOT_MOUNT",
    }
)
MAX_ENV_VALUE = 4096


def check_toolkit_env(v: Mapping[str, Any]) -> Mapping[str, Any]:
    """``toolkit.env``: path-valued variables are clean absolute paths; every value one line."""
    for name, value in v.items():
        if isinstance(value, str):
            try:
                if name == "CONTAINERD_RUNTIME_CLASS":
                    check_runtime_class(value)
                elif name in _PATH_ENV:
                    check_host_path(value)
                elif len(value) > MAX_ENV_VALUE or "\n" in value or "\r" in value or "\0" in value:
                    raise ValueError(f"{shown(value)} must be one line of at most {MAX_ENV_VALUE}")
            except ValueError as e:
                raise RuleError(str(e), at=(name,)) from None
    return v


# --- Google Cloud -------------------------------------------------------------------------------
# Project IDs: 6-30 lowercase letters, digits, hyphens; start with a letter, not end with a hyphen
# (https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin);
# legacy domain-scoped IDs are "example.com:my-project".
_RE_GCP_PROJECT = re.compile(r"^(?:[a-z0-9][-a-z0-9.]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$")


def check_gcp_project_id(v: Any) -> str:
    """A GCP project ID (not its display name or number)."""
    if not isinstance(v, str) or not _RE_GCP_PROJECT.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a project ID: 6-30 lowercase letters, digits and '-', starting "
            "with a letter (the ID, not the display name)"
        )
    return v


# GCE labels: keys 1-63 of [a-z0-9_-] starting with a letter, values 0-63 of [a-z0-9_-]
# (https://cloud.google.com/compute/docs/labeling-resources#requirements; international letters
# are also allowed there and accepted here).
_RE_GCE_LABEL_KEY = re.compile(r"^[^\W\d_][\w-]{0,62}$")
_RE_GCE_LABEL_VALUE = re.compile(r"^[\w-]{0,63}$")


def check_gce_labels(v: Mapping[str, str]) -> Mapping[str, str]:
    """GCE resource labels: lowercase keys and values, at most 64 labels."""
    if len(v) > 64:
        raise ValueError(f"{len(v)} labels; GCE allows at most 64 per resource")
    for key, value in v.items():
        if not _RE_GCE_LABEL_KEY.fullmatch(key) or key != key.lower():
            raise RuleError(
                f"{shown(key)} is not a GCE label key: 1-63 lowercase letters, digits, '_' or '-', "
                "starting with a letter",
                at=(key,),
            )
        if not _RE_GCE_LABEL_VALUE.fullmatch(value) or value != value.lower():
            raise RuleError(
                f"{shown(value)} is not a GCE label value: at most 63 lowercase letters, "
                "digits, '_' or '-'",
                at=(key,),
            )
    return v


def check_gce_resource_name(v: str) -> str:
    """A GCE resource name (RFC 1035 label, at most 63): reservations, networks, subnetworks."""
    if len(v) > 63 or not _RE_RFC1035_LABEL.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a GCE resource name: lowercase letters, digits and '-', starting "
            "with a letter, at most 63 characters"
        )
    return v


def check_reservation_name(v: str) -> str:
    """A reservation: its name, or ``projects/P/reservations/NAME`` for a shared one.

    Source: GKE consuming reservations (https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations).
    """
    parts = v.split("/")
    if len(parts) == 4 and parts[0] == "projects" and parts[2] == "reservations":
        check_gcp_project_id(parts[1])
        check_gce_resource_name(parts[3])
        return v
    return check_gce_resource_name(v)


# GKE version aliases: "latest", "1.X", "1.X.Y", "1.X.Y-gke.N", "-" (container v1 API,
# UpdateMasterRequest.masterVersion / Cluster.initialClusterVersion).
_RE_GKE_VERSION = re.compile(r"^(latest|-|[1-9][0-9]*\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?)$")


def check_gke_version(v: str) -> str:
    """A GKE version or alias: ``latest``, ``1.33``, ``1.33.5``, ``1.33.5-gke.1``."""
    if not _RE_GKE_VERSION.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a GKE version: latest, 1.X, 1.X.Y or 1.X.Y-gke.N (e.g. 1.33)"
        )
    return v


# EKS takes "1.X" (CreateCluster version: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html).
_RE_EKS_VERSION = re.compile(r"^1\.[0-9]{2}$")


def check_eks_version(v: str) -> str:
    """An EKS Kubernetes version: ``1.X`` (no patch, no ``v``)."""
    if not _RE_EKS_VERSION.fullmatch(v):
        raise ValueError(f"{shown(v)} is not an EKS Kubernetes version such as 1.33 (major.minor)")
    return v


# GCE machine type names: family-type-vCPUs, e.g. e2-standard-4, n2-highmem-8, c3-standard-4-lssd
# (https://cloud.google.com/compute/docs/machine-resource); e2 shared-core: e2-micro/-small/-medium.
_RE_GCE_MACHINE = re.compile(
    r"^(?:[a-z][a-z0-9]*-(?:standard|highmem|highcpu|megagpu|ultragpu|highgpu|edgegpu|ultramem|"
    r"megamem|hypermem|custom)(?:-[0-9]+)?(?:-[a-z0-9]+)*|e2-(?:micro|small|medium)|"
    r"[fg]1-(?:micro|small)|(?:[a-z][a-z0-9]*-)?custom-[0-9]+-[0-9]+(?:-ext)?)$"
)


def check_gce_machine_type(v: str) -> str:
    """A GCE machine type name (family-type-vCPUs)."""
    if not _RE_GCE_MACHINE.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a GCE machine type such as e2-standard-4 or n2-highmem-8 "
            "(family-type-vCPUs)"
        )
    return v


# GKE Cluster.name: up to 40 lowercase letters, digits and '-', starting with a letter, ending with
# a letter or digit (google.cloud.container_v1.types.Cluster.name).
_RE_GKE_CLUSTER = _full(r"[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?")


def check_gke_cluster_name(v: str) -> str:
    """A GKE cluster name (container v1 ``Cluster.name``)."""
    if not _RE_GKE_CLUSTER.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a GKE cluster name: lowercase letters, digits and '-', starting "
            "with a letter, ending with a letter or digit, at most 40 characters"
        )
    return v


# GKE Cluster.network / subnetwork: a name, or the resource path of a (Shared VPC) network
# (container v1 Cluster.network "the name of the Google Compute Engine network"; resource paths
# projects/P/global/networks/N, projects/P/regions/R/subnetworks/N:
# https://cloud.google.com/compute/docs/naming-resources).
_RE_GCE_NETWORK_PATH = _full(r"projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/global/networks/([^/]+)")
_RE_GCE_SUBNETWORK_PATH = _full(
    r"projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/regions/[a-z]+-[a-z]+[0-9]+/subnetworks/([^/]+)"
)


def check_gce_network(v: str) -> str:
    """A VPC network: RFC 1035 name or ``projects/P/global/networks/N``."""
    m = _RE_GCE_NETWORK_PATH.fullmatch(v)
    try:
        check_gce_resource_name(m.group(1) if m else v)
    except ValueError:
        raise ValueError(
            f"{shown(v)} is not a network: an RFC 1035 name (lowercase, starting with a letter, "
            "at most 63) or projects/PROJECT/global/networks/NAME"
        ) from None
    return v


def check_gce_subnetwork(v: str) -> str:
    """A subnetwork: RFC 1035 name or ``projects/P/regions/R/subnetworks/N``."""
    m = _RE_GCE_SUBNETWORK_PATH.fullmatch(v)
    try:
        check_gce_resource_name(m.group(1) if m else v)
    except ValueError:
        raise ValueError(
            f"{shown(v)} is not a subnetwork: an RFC 1035 name (lowercase, starting with a "
            "letter, at most 63) or projects/PROJECT/regions/REGION/subnetworks/NAME"
        ) from None
    return v


# Maintenance recurrence: an RFC 5545 RRULE (GKE MaintenanceWindow.recurringWindow.recurrence),
# FREQ first, KEY=VALUE parts separated by ';', one line.
_RE_RRULE = _full(r"FREQ=(?:DAILY|WEEKLY|MONTHLY)(?:;[A-Z]+=[A-Z0-9,+:-]+)*")


def check_rrule(v: str) -> str:
    """A GKE maintenance recurrence such as ``FREQ=WEEKLY;BYDAY=SA,SU``."""
    if len(v) > 512 or not _RE_RRULE.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=SA,SU "
            "(FREQ=DAILY|WEEKLY|MONTHLY, then ;KEY=VALUE parts)"
        )
    return v


# Flex-start VMs run for at most seven days
# (https://cloud.google.com/kubernetes-engine/docs/concepts/dws: "for up to seven days").
MAX_FLEX_RUN_SECONDS = 7 * 24 * 3600


def check_max_run_duration(v: str) -> str:
    """``maxRunDuration``: whole seconds with an ``s`` suffix, at most 7 days (604800s)."""
    if not (len(v) <= 12 and re.fullmatch(r"[1-9][0-9]*s", v, re.ASCII)):
        raise ValueError(f"{shown(v)} is not a duration in seconds such as 86400s")
    if int(v[:-1]) > MAX_FLEX_RUN_SECONDS:
        raise ValueError(
            f"{v} is longer than 7 days; flex-start VMs run for at most {MAX_FLEX_RUN_SECONDS}s"
        )
    return v


# --- AWS ----------------------------------------------------------------------------------------
# EC2 instance type names: family[generation][attributes].size
# (https://docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html).
_RE_EC2_TYPE = re.compile(
    r"^[a-z][a-z0-9-]*\.(?:nano|micro|small|medium|large|[0-9]*xlarge|metal(?:-[0-9]+xl)?)$"
)


def check_ec2_instance_type(v: str) -> str:
    """An EC2 instance type name such as m6i.large."""
    if not _RE_EC2_TYPE.fullmatch(v):
        raise ValueError(f"{shown(v)} is not an EC2 instance type such as m6i.large (family.size)")
    return v


# EKS CreateCluster name: letters (case-sensitive), digits, '-' and '_', starting with a letter or
# digit, 1-100 characters (https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html).
_RE_EKS_CLUSTER = _full(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}")


def check_eks_cluster_name(v: str) -> str:
    """An EKS cluster name as CreateCluster accepts it."""
    if not _RE_EKS_CLUSTER.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not an EKS cluster name: letters, digits, '-' and '_', starting with a "
            "letter or digit, at most 100 characters"
        )
    return v


# AZ IDs look like usw2-az1 (https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html);
# AZ names (us-west-2a) map to different physical AZs in each account.
_RE_AZ_ID = re.compile(
    r"^[a-z]{2,4}[0-9]+(-[a-z]{3}[0-9]+)?-az[0-9]+$"
)  # local zones: usw2-lax1-az1
_RE_AZ_NAME = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]+[a-z]$")


def check_az_id(v: str) -> str:
    """An AZ ID (usw2-az1); an AZ name is explained as such."""
    if _RE_AZ_ID.fullmatch(v):
        return v
    if _RE_AZ_NAME.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is an AZ name; give AZ IDs such as usw2-az1 (names map to different "
            "zones in each account: aws ec2 describe-availability-zones shows the ZoneId)"
        )
    raise ValueError(f"{shown(v)} is not an AZ ID such as usw2-az1")


# EKS access policy scope: Kubernetes namespace names; "You can use wildcard characters for a
# namespace name" at its end, e.g. dev-* (https://docs.aws.amazon.com/eks/latest/userguide/access-policies.html).
_RE_SCOPE_NAMESPACE = _full(rf"{_DNS1123_LABEL}|[a-z0-9][-a-z0-9]*\*")


def check_access_scope_namespace(v: str) -> str:
    """A namespace an EKS access policy is scoped to: a DNS-1123 label, or a prefix ending in ``*``."""
    if len(v) > 63 or not _RE_SCOPE_NAMESPACE.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not a namespace or namespace prefix: a DNS-1123 label (lowercase, "
            "digits, '-', at most 63), optionally ending in '*' (dev-*)"
        )
    return v


# EKS public endpoint: at most 40 CIDR blocks
# (https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html, "Public endpoint access
# CIDR ranges per cluster"); it is reached from the internet, so private ranges never match.
MAX_EKS_PUBLIC_CIDRS = 40
# Ranges never seen as a source on the internet: RFC 1918 private, loopback, link-local, CGNAT
# (RFC 6598), "this network", multicast and reserved (IANA IPv4 special-purpose registry).
_NON_PUBLIC = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)


def check_ipv4_cidr(v: str) -> str:
    """An IPv4 network in CIDR form with no host bits set (10.0.0.0/16, not 10.0.0.1/16)."""
    try:
        net = ipaddress.IPv4Network(v, strict=True)
    except ValueError as e:
        raise ValueError(
            f"{shown(v)} is not an IPv4 CIDR block: {shown(str(e), 120)[1:-1]}"
        ) from None
    if "/" not in v:
        raise ValueError(f"{shown(v)} needs a prefix length, e.g. {net}/32")
    return v


def check_public_access_cidrs(v: list[str]) -> list[str]:
    """EKS ``publicAccessCidrs``: valid, public IPv4 blocks, at most 40."""
    if len(v) > MAX_EKS_PUBLIC_CIDRS:
        raise ValueError(f"{len(v)} CIDR blocks; EKS allows at most {MAX_EKS_PUBLIC_CIDRS}")
    for i, cidr in enumerate(v):
        try:
            check_ipv4_cidr(cidr)
        except ValueError as e:
            raise RuleError(str(e), at=(i,)) from None
        net = ipaddress.IPv4Network(cidr)
        # Inside a non-public block, never merely overlapping one: 0.0.0.0/1 + 128.0.0.0/1 is the
        # whole internet split in two and valid (it spans private ranges, as 0.0.0.0/0 does).
        if any(net.subnet_of(n) for n in _NON_PUBLIC):
            raise RuleError(
                f"{cidr} is not a public range; the public endpoint is reached from the "
                "internet (use the private endpoint for VPC-internal access)",
                at=(i,),
            )
    return v


# A private VPC range (RFC 1918, as VPC CIDRs: https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html),
# /16 (the planner splits it into /19 subnets per AZ).
def check_vpc_cidr(v: str) -> str:
    """A /16 inside 10.0.0.0/8 for the new VPC."""
    check_ipv4_cidr(v)
    net = ipaddress.IPv4Network(v)
    if net.prefixlen != 16 or not net.subnet_of(ipaddress.IPv4Network("10.0.0.0/8")):
        raise ValueError(f"{shown(v)} must be a /16 inside 10.0.0.0/8, e.g. 10.0.0.0/16")
    return v


# IAM role/user ARNs: arn:PARTITION:iam::ACCOUNT:role/PATH/NAME, names of [\w+=,.@-] up to 64
# (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html#reference_iam-quotas-names).
# EKS access entries take one existing principal; no wildcards, no STS session ARNs
# (EKS CreateAccessEntry API reference, principalArn).
_RE_IAM_PRINCIPAL = re.compile(
    r"^arn:aws(?:-cn|-us-gov|-iso|-iso-[a-z])?:iam::[0-9]{12}:(?:role|user)"
    r"/(?:[\w+=,.@-]+/)*[\w+=,.@-]{1,64}$",
    re.ASCII,  # IAM names are ASCII; Python's \w is not
)


def check_iam_principal_arn(v: str) -> str:
    """An IAM role or user ARN as EKS access entries accept it."""
    if "*" in v or "?" in v:
        raise ValueError(
            f"{shown(v)}: access entries name one principal; wildcards are not allowed"
        )
    if ":sts::" in v or ":assumed-role/" in v:
        raise ValueError(
            f"{shown(v)} is an STS session; access entries take the IAM role ARN "
            "(arn:aws:iam::ACCOUNT:role/NAME)"
        )
    if len(v) > 2048 or not _RE_IAM_PRINCIPAL.fullmatch(v):
        raise ValueError(
            f"{shown(v)} is not an IAM role or user ARN such as arn:aws:iam::111122223333:role/admins"
        )
    return v


# --- Annotated types the schemas use ------------------------------------------------------------
Dns1123Label = Annotated[str, _rule(check_dns1123_label)]
Dns1123Subdomain = Annotated[str, _rule(check_dns1123_subdomain)]
NamespaceName = Annotated[str, _rule(check_namespace)]
OperatorNamespace = Annotated[str, _rule(check_operator_namespace)]
NodeName = Dns1123Subdomain  # Node names are DNS-1123 subdomains
RuntimeClassName = Annotated[str, _rule(check_runtime_class)]
Labels = Annotated[dict[str, str], _rule(check_labels)]
NodeLabels = Annotated[dict[str, str], _rule(check_node_labels)]
GpuNamespaceLabels = Annotated[dict[str, str], _rule(check_gpu_namespace_labels)]
TaintKey = Annotated[str, _rule(check_taint_key)]
TaintValue = Annotated[str, _rule(check_taint_value)]
EksNodeLabels = Annotated[dict[str, str], _rule(check_eks_node_labels)]
EksTaintKey = Annotated[str, _rule(check_eks_taint_key)]
GkeClusterName = Annotated[str, _rule(check_gke_cluster_name)]
EksClusterName = Annotated[str, _rule(check_eks_cluster_name)]
GceNetwork = Annotated[str, _rule(check_gce_network)]
GceSubnetwork = Annotated[str, _rule(check_gce_subnetwork)]
RRule = Annotated[str, _rule(check_rrule)]
MaxRunDuration = Annotated[str, _rule(check_max_run_duration)]
AccessScopeNamespace = Annotated[str, _rule(check_access_scope_namespace)]
ImageReference = Annotated[str, _rule(check_image_reference)]
HostPath = Annotated[str, _rule(check_host_path)]
KubeconfigPath = Annotated[str, _rule(check_kubeconfig_path)]
GceLabels = Annotated[dict[str, str], _rule(check_gce_labels)]
GceResourceName = Annotated[str, _rule(check_gce_resource_name)]
ReservationName = Annotated[str, _rule(check_reservation_name)]
GkeVersion = Annotated[str, _rule(check_gke_version)]
EksVersion = Annotated[str, _rule(check_eks_version)]
GceMachineType = Annotated[str, _rule(check_gce_machine_type)]
Ec2InstanceType = Annotated[str, _rule(check_ec2_instance_type)]
AzId = Annotated[str, _rule(check_az_id)]
Ipv4Cidr = Annotated[str, _rule(check_ipv4_cidr)]
VpcCidr = Annotated[str, _rule(check_vpc_cidr)]
PublicAccessCidrs = Annotated[list[str], _rule(check_public_access_cidrs)]
IamPrincipalArn = Annotated[str, _rule(check_iam_principal_arn)]


# --- GPU names as consoles write them -----------------------------------------------------------
def gpu_type_hint(value: object, known: list[str] | tuple[str, ...]) -> str:
    """``"; did you mean 'nvidia-tesla-t4'?"`` for console wording (``NVIDIA T4``), else ``""``.

    The Cloud Console shows display names ("NVIDIA T4", "NVIDIA A100 40GB"); the API takes the
    accelerator type name (https://cloud.google.com/compute/docs/gpus#gpu-models).
    """
    if not isinstance(value, str):
        return ""
    norm = "-".join(value.lower().replace("_", " ").replace("-", " ").split())
    if not norm.startswith("nvidia-"):
        norm = f"nvidia-{norm}"
    tesla = norm.replace("nvidia-tesla-", "nvidia-").replace("nvidia-", "nvidia-tesla-", 1)
    for guess in (
        norm,
        tesla,
        tesla.removesuffix("-40gb"),
        norm.replace("nvidia-tesla-", "nvidia-"),
    ):
        if guess in known:
            return f"; did you mean '{guess}'?"
    return did_you_mean(norm, known, cutoff=0.9)
