"""Warning headers for exported files that hold values only a real deploy knows.

Values the offline plan's mock engine made up (account IDs, endpoints), logical names of resources
Pulumi autonames (the real name has a random suffix), names an offline plan assumes of a stack on
a cluster it shares (``Platform.deployed_names``), and the Git repository URL to replace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from infra.planview.gitops import GIT_REPO_PLACEHOLDER

# Kinds whose physical name Pulumi derives from the logical name plus a random suffix when the
# name input is absent ("Pulumi auto-names most resources by default, using the logical name and a
# random suffix", https://www.pulumi.com/docs/iac/concepts/resources/names/#autonaming): token ->
# the inputs that name it explicitly.
AUTONAMED_KINDS: dict[str, tuple[str, ...]] = {
    "aws:iam/role:Role": ("name", "namePrefix"),
    "aws:iam/policy:Policy": ("name", "namePrefix"),
    "aws:iam/instanceProfile:InstanceProfile": ("name", "namePrefix"),
    "aws:ec2/launchTemplate:LaunchTemplate": ("name", "namePrefix"),
    "aws:ec2/securityGroup:SecurityGroup": ("name", "namePrefix"),
    "aws:ec2/placementGroup:PlacementGroup": ("name",),
    "aws:sqs/queue:Queue": ("name", "namePrefix"),
    "aws:cloudwatch/eventRule:EventRule": ("name", "namePrefix"),
    "aws:eks/nodeGroup:NodeGroup": ("nodeGroupName", "nodeGroupNamePrefix"),
}


def autonamed(resources: list[Any]) -> dict[str, str]:
    """Logical name -> kind of every resource registered without a name input of an autonamed
    kind: the real name is that logical name plus ``-`` and 7 random characters."""
    found: dict[str, str] = {}
    for r in resources:
        keys = AUTONAMED_KINDS.get(r.type)
        name = getattr(r, "name", None)
        if keys is not None and name and not any(r.inputs.get(k) for k in keys):
            found[name] = r.type.rsplit(":", 1)[-1]
    return found


def autonamed_in(text: str, names: Mapping[str, str]) -> list[str]:
    """The autonamed logical names ``text`` holds as a whole value (not inside a longer name)."""
    return sorted(
        n for n in names if re.search(r"(?<![\w.-])" + re.escape(n) + r"(?![\w.-])", text)
    )


def assumed_names_note(assumed: Sequence[str]) -> str:
    """Why ``assumed`` names (``Platform.deployed_names`` without a deployed one) may be wrong."""
    return (
        f"--export: {', '.join(assumed)}: the names a first deploy gives the stack's objects on a "
        "cluster the stack shares; a stack that runs under names an older gpu-infra gave it (kept "
        "by its upgrade) runs under others, and Argo CD or Flux would create these beside them: "
        "pass --stack-outputs FILE (`pulumi stack output --json` of the deployed stack) to export "
        "the names it runs under"
    )


def placeholder_header(
    text: str, names: Mapping[str, str] | None = None, assumed: Sequence[str] = ()
) -> str:
    """A warning header when ``text`` holds values only the mock engine made up (ARNs, endpoints),
    the logical name of a resource Pulumi autonames (``names``: logical name -> kind), or a name an
    offline plan assumes (``assumed``: ``assumed_names_note``)."""
    from infra.mockanswers import MOCK_ACCOUNT, MOCK_ENDPOINT

    found = [m for m in (MOCK_ACCOUNT, MOCK_ENDPOINT, "MOCK000") if m in text]
    head = ""
    if found:
        head = (
            "# PLACEHOLDERS: this file holds values the offline plan's mock engine made up ("
            + ", ".join(found)
            + "); take the real ones from `pulumi stack output` / the cloud before committing "
            "it.\n"
        )
    for n in autonamed_in(text, names or {}):
        head += (
            f"# PLACEHOLDERS: {n} is the logical name of a {(names or {})[n]} Pulumi autonames: "
            "Pulumi adds a random 7-character suffix; take the real name from the stack "
            "(`pulumi stack export`) or the console.\n"
        )
    if held := autonamed_in(text, dict.fromkeys(assumed, "")):
        head += f"# PLACEHOLDERS: {assumed_names_note(held)}.\n"
    if GIT_REPO_PLACEHOLDER in text:
        head += (
            f"# PLACEHOLDERS: set {GIT_REPO_PLACEHOLDER} to the URL of the Git repository this "
            "directory is committed to, and the path to the directory's path in it.\n"
        )
    return head


def fills(
    mock_outputs: Mapping[str, Any], stack_outputs: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """``(made-up value, real value)`` pairs: what the offline run's stack outputs hold where
    ``pulumi stack output --json`` of the deployed stack holds the real value.

    ``deployedNames`` (``infra.program``) gives per autonamed resource its real name and ARN;
    ``clusterEndpoint`` the API server (the cluster's name is the stack file's, never made up);
    the AWS account of the real ARNs replaces the mock account
    wherever it is left. ARNs come before names: an ARN holds the name.
    """
    from infra.mockanswers import MOCK_ACCOUNT, MOCK_ENDPOINT

    pairs: list[tuple[str, str]] = []
    mock_names = mock_outputs.get("deployedNames") or {}
    real_names = stack_outputs.get("deployedNames") or {}
    for attr in ("arn", "name"):
        for logical, mock in mock_names.items():
            real = real_names.get(logical) or {}
            if isinstance(mock, Mapping) and mock.get(attr) and real.get(attr):
                pairs.append((str(mock[attr]), str(real[attr])))
    if mock_outputs.get("clusterEndpoint") and stack_outputs.get("clusterEndpoint"):
        pairs.append((str(mock_outputs["clusterEndpoint"]), str(stack_outputs["clusterEndpoint"])))
    endpoint = str(stack_outputs.get("clusterEndpoint") or "")
    if endpoint.startswith("https://"):  # the bare host where the export holds no scheme
        pairs.append((MOCK_ENDPOINT, endpoint.removeprefix("https://").split("/", 1)[0]))
    accounts = {
        arn.split(":")[4]
        for _, arn in pairs
        if arn.startswith("arn:aws") and len(arn.split(":")) > 5 and arn.split(":")[4]
    }
    if len(accounts) == 1:
        pairs.append((MOCK_ACCOUNT, accounts.pop()))
    return pairs


def filled_object(doc: Any, pairs: list[tuple[str, str]]) -> Any:
    """``doc`` (a manifest) with ``filled`` applied to every string in it, keys kept: its file
    name, made from its name, follows."""
    if isinstance(doc, Mapping):
        return {k: filled_object(v, pairs) for k, v in doc.items()}
    if isinstance(doc, list):
        return [filled_object(v, pairs) for v in doc]
    return filled(doc, pairs) if isinstance(doc, str) else doc


def filled(text: str, pairs: list[tuple[str, str]]) -> str:
    """``text`` with every made-up value of ``pairs`` replaced where it stands as a whole value
    (a name inside a longer name is left alone)."""
    for mock, real in pairs:
        text = re.sub(r"(?<![\w.-])" + re.escape(mock) + r"(?![\w-])", lambda _m, r=real: r, text)
    return text
