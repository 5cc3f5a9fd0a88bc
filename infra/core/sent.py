"""One string a plan sends, checked as its receiver checks it, at the config key it comes from.

The receiver check (``infra.core.receivers``) walks every object of a plan; each platform checks
the names, labels, taints and tags of its own cloud objects (``Platform.receiver_issues``). Both use
these rules, so a label is judged the same wherever it is sent. Limits come from
``infra/core/data/receiver_limits.csv`` (``infra.core.rules.limits``); the grammars from
``infra.core.rules`` (apimachinery's, GCE's).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from infra.core import rules
from infra.core.config.stack import StackConfig
from infra.core.errors import ConfigIssue, join_path, shown
from infra.core.rules.limits import limit


@dataclass(frozen=True, slots=True)
class Claim:
    """A name the plan creates, in its scope (``Namespace`` / ``<kind> in <ns>`` / a cloud scope)."""

    scope: str
    name: str
    key: str


def length_issues(key: str, value: str, name: str, what: str) -> Iterator[ConfigIssue]:
    """``value`` within the receiver limit ``name`` of ``receiver_limits.csv``."""
    if len(value) > (most := limit(name)):
        yield ConfigIssue(key, f"{what} {shown(value, 60)}: at most {most} characters")


def helm_release_issues(key: str, name: str) -> Iterator[ConfigIssue]:
    """A Helm release name (helm/helm pkg/chartutil/validate_name.go: a DNS-1123 subdomain of at
    most 53 characters)."""
    most = limit("helm.release_name")
    try:
        rules.check_dns1123_subdomain(name)
    except ValueError as e:
        yield ConfigIssue(key, f"Helm release name: {e}")
    if len(name) > most:
        yield ConfigIssue(
            key,
            f"Helm release name {shown(name, 70)} is {len(name)} characters; Helm takes at most {most}",
        )


def aws_tag_issues(key: str, tags: Mapping[str, str], also: int = 0) -> Iterator[ConfigIssue]:
    """AWS tags of one resource: how many, and each key's and value's length (``also``: tags
    counted elsewhere that the resource carries too)."""
    if (count := len(tags) + also) > (most := limit("aws.tags_per_resource")):
        yield ConfigIssue(key, f"{count} tags; AWS allows at most {most} per resource")
    for k, v in tags.items():
        if not 1 <= len(k) <= limit("aws.tag_key"):
            yield ConfigIssue(
                key,
                f"tag key {shown(k, 60)}: AWS tag keys are 1-{limit('aws.tag_key')}",
            )
        if len(v) > limit("aws.tag_value"):
            yield ConfigIssue(
                key,
                f"tag {shown(k, 40)}: value is {len(v)} characters; AWS tag values are at most "
                f"{limit('aws.tag_value')}",
            )


def labels_issues(
    key: str, labels: Mapping[str, str], config: StackConfig, model: str = ""
) -> Iterator[ConfigIssue]:
    """A pool's node labels; a label the planner built from the GPU model (``model``, the
    ``gpuPools[].gpu.model`` a platform builds labels from) names that key."""
    i = pool_index(config, key)
    pool = config.pools[i] if i is not None else None
    model = model.lower()
    for k, v in labels.items():
        if pool is not None and k not in pool.labels and model and model in str(v).lower():
            yield from label_issues(join_path(key, "gpu", "model"), k, v)
        else:
            yield from label_issues(join_path(key, "labels", k), k, v)


def label_issues(key: str, k: Any, v: Any) -> Iterator[ConfigIssue]:
    """One label: its key a qualified name, its value a label value (the API server's rules)."""
    try:
        rules.check_qualified_name(str(k))
        rules.check_label_value(str(v))
    except ValueError as e:
        yield ConfigIssue(key, f"label {shown(str(k), 60)}: {e} (Kubernetes API server)")


def taint_issues(key: str, taints: list[tuple[str, str, str]]) -> Iterator[ConfigIssue]:
    """Taints: valid keys and values, unique by key and effect (the API server's rule)."""
    seen: dict[tuple[str, str], int] = {}
    for k, v, effect in taints:
        try:
            rules.check_taint_key(k)
            rules.check_taint_value(v)
        except ValueError as e:
            yield ConfigIssue(key, str(e))
        seen[k, effect] = seen.get((k, effect), 0) + 1
        if seen[k, effect] == limit("k8s.taints_per_key_effect") + 1:
            yield ConfigIssue(
                key,
                f"two taints with key {k!r} and effect {effect}; the API server takes taints "
                "unique by key and effect",
            )


def pool_index(config: StackConfig, key_or_name: str | None) -> int | None:
    """The ``gpuPools`` index of a pool name (GKE fallback ``<pool>-<shape hash>`` -> its pool) or of
    a ``gpuPools[i]`` key."""
    if key_or_name is None:
        return None
    names = [p.name for p in config.pools]
    if key_or_name.startswith("gpuPools["):
        return int(key_or_name[len("gpuPools[") :].split("]", 1)[0])
    if key_or_name in names:
        return names.index(key_or_name)
    # Derived names (GKE fallback pools, EKS node groups per zone) start with "<pool>-".
    owners = [i for i, n in enumerate(names) if key_or_name.startswith(f"{n}-")]
    return max(owners, key=lambda i: len(names[i])) if owners else None


def pool_key(config: StackConfig, name: str | None, *rest: str) -> str:
    """The config key of the pool ``name`` comes from (``gpuPools`` when none does)."""
    i = pool_index(config, name)
    return join_path("gpuPools", i, *rest) if i is not None else "gpuPools"
