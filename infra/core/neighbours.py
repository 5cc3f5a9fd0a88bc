"""What keeps two stacks on one cluster apart: the per-stack node label.

Pure code. On a cluster the stack does not own (``cluster.existing``) another stack may plan a
pool of the same name, so the pool label alone selects both stacks' nodes: a DaemonSet, smoke
test or placeholder of one stack would run on the other's nodes, and a destroy of one would
change pods on the other's. Every GPU node of such a stack carries ``STACK_LABEL`` and every
per-stack selector requires it. A cluster the stack creates holds only its own pools: no label
(a running stack's nodes, NodePools and selectors stay as they are).
"""

from __future__ import annotations

import hashlib
import re

from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import StackConfig
from infra.core.labels import STACK_LABEL
from infra.core.rules.limits import limit

# A label value: "must be 63 characters or less ... begin and end with an alphanumeric character
# ([a-z0-9A-Z]) with dashes (-), underscores (_), dots (.), and alphanumerics between"
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set;
# k8s.io/apimachinery pkg/util/validation/validation.go IsValidLabelValue, LabelValueMaxLength).
LABEL_VALUE_MAX = limit("k8s.label_value")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?", re.ASCII)
# Pulumi stack names: 1-100 of [A-Za-z0-9_.-] (receiver_limits.csv pulumi.stack_name): the same
# characters as a label value, but longer and free to start or end with '-', '_' or '.'.
STACK_NAME_MAX = limit("pulumi.stack_name")
_HASH = 8


def stack_label_value(stack: str) -> str:
    """``stack`` when it is a label value; else its label-value characters cut to fit, ``-`` and
    8 hex of the SHA-256 of the whole name: deterministic, at most 63 characters, and two stack
    names that differ only past the cut (or in a character dropped) still differ."""
    if len(stack) <= LABEL_VALUE_MAX and _LABEL_VALUE.fullmatch(stack):
        return stack
    digest = hashlib.sha256(stack.encode()).hexdigest()[:_HASH]
    kept = re.sub(r"[^A-Za-z0-9_.-]", "-", stack, flags=re.ASCII)
    head = kept[: LABEL_VALUE_MAX - _HASH - 1].strip("-_.")
    return f"{head}-{digest}" if head else digest


def stack_node_labels(config: StackConfig, catalog: Catalog) -> dict[str, str]:
    """``{STACK_LABEL: <stack>}`` on a cluster the stack does not own; ``{}`` on its own, and on
    the side of a ``--diff`` planned as a gpu-infra from before the label deployed it
    (``Catalog.stack_node_labels``)."""
    if not config.cluster.existing or not catalog.stack_node_labels:
        return {}
    return {STACK_LABEL: stack_label_value(config.stack)}
