"""Check a NodePool or EC2NodeClass manifest the way the API server would admit it.

Pure code. The pinned CRDs' ``openAPIV3Schema`` (vendored in ``infra/core/data/karpenter`` by
``scripts/vendor_karpenter_crds.py``) gives types, required fields, enums, patterns and maxItems;
jsonschema checks those. The CRDs' CEL rules (``x-kubernetes-validations``) are not JSON Schema:
the ones that matter for what gpu-infra sends are encoded below, each with the rule it mirrors.
Restricted label lists are read from the vendored rule text, so they follow the pin.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

from infra.core.catalog.pins import pin
from infra.core.catalog.vendored import DATA_DIR

DATA = Path(__file__).resolve().parents[2] / "data" / "karpenter"
# The release tag of the vendored CRDs: the karpenter pin's, as the charts' (tests/unit/test_pins.py).
# The CRDs vendored with this code (data/karpenter/), read at the vendored row's version.
KARPENTER_VERSION = "v" + pin("karpenter", DATA_DIR).version
NODEPOOL_API = "karpenter.sh/v1"
NODECLASS_API = "karpenter.k8s.aws/v1"
_FILES = {"NodePool": "nodepools.schema.json", "EC2NodeClass": "ec2nodeclasses.schema.json"}

Manifest = Mapping[str, Any]


@functools.cache
def vendored(kind: str) -> dict[str, Any]:
    """The vendored file of ``kind`` (source, version, commit, openAPIV3Schema)."""
    return json.loads((DATA / _FILES[kind]).read_text())


def _cel_rules(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for v in node.get("x-kubernetes-validations", ()):
            yield v["rule"]
        for value in node.values():
            yield from _cel_rules(value)
    elif isinstance(node, list):
        for value in node:
            yield from _cel_rules(value)


@functools.cache
def allowed_labels(domain: str) -> frozenset[str]:
    """The labels of a restricted ``domain`` a NodePool requirement may still use, read from the
    CRD rule ``self in [...] || !self.find("^([^/]+)").endsWith("<domain>")``."""
    for rule in _cel_rules(vendored("NodePool")["openAPIV3Schema"]):
        if rule.startswith("self in [") and rule.endswith(f'endsWith("{domain}")'):
            return frozenset(re.findall(r'"([^"]+)"', rule.split("]")[0]))
    raise LookupError(f"no restricted-domain rule for {domain} in the vendored NodePool CRD")


def label_problem(key: str) -> str | None:
    """Why a NodePool requirement or template label key is refused, with the CRD's message:
    karpenter.sh and karpenter.k8s.aws are restricted domains, karpenter.sh/nodepool and
    kubernetes.io/hostname restricted labels (karpenter.sh_nodepools.yaml requirements[].key)."""
    if key in ("karpenter.sh/nodepool", "kubernetes.io/hostname"):
        return f'label "{key}" is restricted'
    domain = key.split("/")[0] if "/" in key else ""
    for restricted in ("karpenter.sh", "karpenter.k8s.aws"):
        if domain.endswith(restricted) and key not in allowed_labels(restricted):
            return f'label domain "{restricted}" is restricted'
    return None


def _schema_errors(manifest: Manifest, kind: str) -> list[str]:
    schema = vendored(kind)["openAPIV3Schema"]
    errors = []
    for e in sorted(Draft7Validator(schema).iter_errors(manifest), key=lambda e: list(e.path)):
        path = ".".join(str(p) for p in e.absolute_path) or "(root)"
        errors.append(f"{path}: {e.message}")
    return errors


def _requirement_errors(spec: Mapping[str, Any]) -> Iterator[str]:
    template = spec.get("template", {})
    for j, r in enumerate(template.get("spec", {}).get("requirements", ())):
        at = f"spec.template.spec.requirements.{j}"
        if (why := label_problem(r.get("key", ""))) is not None:
            yield f"{at}.key: {why}"
        op, values = r.get("operator"), r.get("values", [])
        # "requirements with operator 'In' must have a value defined"
        # (self.all(x, x.operator == 'In' ? x.values.size() != 0 : true))
        if op == "In" and not values:
            yield f"{at}: requirements with operator 'In' must have a value defined"
        # "... 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
        if op in ("Gt", "Lt", "Gte", "Lte") and not (len(values) == 1 and values[0].isdigit()):
            yield f"{at}: operator {op} must have a single positive integer value"
    for key in template.get("metadata", {}).get("labels", {}):
        if (why := label_problem(key)) is not None:
            yield f"spec.template.metadata.labels.{key}: {why}"


def _nodepool_cel(m: Manifest) -> Iterator[str]:
    spec = m.get("spec", {})
    yield from _requirement_errors(spec)
    # "'schedule' must be set with 'duration'" (self.all(x, has(x.schedule) == has(x.duration)))
    for j, b in enumerate(spec.get("disruption", {}).get("budgets", ())):
        if ("schedule" in b) != ("duration" in b):
            yield f"spec.disruption.budgets.{j}: 'schedule' must be set with 'duration'"
    # "'weight' is not supported on static NodePools" (!has(self.replicas) || !has(self.weight))
    if "replicas" in spec and "weight" in spec:
        yield "spec: 'weight' is not supported on static NodePools"


# An alias "family@version" (rule self.matches('^[a-zA-Z0-9]+@.+$')) of a known family (rule
# self.split('@')[0] in ['al2','al2023','bottlerocket','windows2019','windows2022','windows2025']).
_ALIAS = re.compile(r"^[a-zA-Z0-9]+@.+$")
ALIAS_FAMILIES = ("al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025")
# EC2NodeClass spec.tags: rules self.all(k, k !='eks:eks-cluster-name'),
# !k.startsWith('kubernetes.io/cluster'), k != 'karpenter.sh/nodepool',
# k !='karpenter.sh/nodeclaim', k !='karpenter.k8s.aws/ec2nodeclass'.
_RESTRICTED_TAGS = ("eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim",
                    "karpenter.k8s.aws/ec2nodeclass")  # fmt: skip


def _alias_errors(terms: list[Mapping[str, Any]]) -> Iterator[str]:
    for j, t in enumerate(terms):
        if "alias" not in t:
            continue
        alias = t["alias"]
        at = f"spec.amiSelectorTerms.{j}.alias"
        if not _ALIAS.match(alias):
            yield f"{at}: 'alias' is improperly formatted, must match the format 'family@version'"
        elif alias.split("@")[0] not in ALIAS_FAMILIES:
            yield f"{at}: family is not supported, must be one of {', '.join(ALIAS_FAMILIES)}"
        # "'alias' is mutually exclusive, cannot be set with a combination of other fields"
        if set(t) - {"alias"}:
            yield f"{at}: 'alias' is mutually exclusive with other fields of the term"
        # !(self.exists(x, has(x.alias)) && self.size() != 1)
        if len(terms) != 1:
            yield f"{at}: 'alias' is mutually exclusive with other amiSelectorTerms"


def _selector_errors(spec: Mapping[str, Any]) -> Iterator[str]:
    for field in ("subnetSelectorTerms", "securityGroupSelectorTerms"):
        terms = spec.get(field, [])
        if not terms:  # self.size() != 0
            yield f"spec.{field}: {field} cannot be empty"
        for j, t in enumerate(terms):
            # "expected at least one, got none, ['tags', 'id', ...]"
            if not set(t) & {"tags", "id", "name"}:
                yield f"spec.{field}.{j}: expected at least one of tags, id"
            # "empty tag keys or values aren't supported" (self.all(k, k != '' && self[k] != ''))
            if any(k == "" or v == "" for k, v in t.get("tags", {}).items()):
                yield f"spec.{field}.{j}.tags: empty tag keys or values aren't supported"


def _nodeclass_cel(m: Manifest) -> Iterator[str]:
    spec = m.get("spec", {})
    yield from _alias_errors(spec.get("amiSelectorTerms", []))
    yield from _selector_errors(spec)
    # "must specify exactly one of ['role', 'instanceProfile']"; "role cannot be empty"
    if ("role" in spec) == ("instanceProfile" in spec):
        yield "spec: must specify exactly one of ['role', 'instanceProfile']"
    if spec.get("role") == "":
        yield "spec.role: role cannot be empty"
    for key in spec.get("tags", {}):
        if key in _RESTRICTED_TAGS or key.startswith("kubernetes.io/cluster") or key == "":
            yield f"spec.tags.{key}: tag contains a restricted tag matching {key or 'empty'}"
    bdms = spec.get("blockDeviceMappings", [])
    for j, b in enumerate(bdms):
        ebs = b.get("ebs", {})
        if ebs and not ({"snapshotID", "volumeSize"} & set(ebs)):  # has(snapshotID)||has(size)
            yield f"spec.blockDeviceMappings.{j}.ebs: snapshotID or volumeSize must be defined"
    if sum(bool(b.get("rootVolume")) for b in bdms) > 1:
        yield "spec.blockDeviceMappings: must have only one blockDeviceMappings with rootVolume"
    for j, t in enumerate(spec.get("capacityReservationSelectorTerms", [])):
        # "'id' is mutually exclusive, cannot be set along with other fields"
        if "id" in t and set(t) - {"id"}:
            yield f"spec.capacityReservationSelectorTerms.{j}: 'id' is mutually exclusive"
        if not set(t) & {"id", "tags", "instanceMatchCriteria"}:
            yield f"spec.capacityReservationSelectorTerms.{j}: expected at least one field"


_CEL: Mapping[str, Callable[[Manifest], Iterator[str]]] = {
    "NodePool": _nodepool_cel,
    "EC2NodeClass": _nodeclass_cel,
}


def validate(manifest: Manifest) -> list[str]:
    """Every reason the pinned CRD of ``manifest['kind']`` refuses it (empty: admitted)."""
    kind = manifest.get("kind")
    if kind not in _FILES:
        return [f"kind: {kind!r} is neither NodePool nor EC2NodeClass"]
    want = NODEPOOL_API if kind == "NodePool" else NODECLASS_API
    errors = [] if manifest.get("apiVersion") == want else [f"apiVersion: expected {want}"]
    name = manifest.get("metadata", {}).get("name", "")
    if not name:
        errors.append("metadata.name: required")
    return errors + _schema_errors(manifest, kind) + list(_CEL[kind](manifest))
