"""Stack-test harness: run the real program on the mock engine and check it against the SDKs.

``run_stack`` fails a test when the program
- calls a provider function the mock engine has no answer for (``UnmockedInvokeError``);
- registers an input property the provider SDK does not declare (a typo in a raw dict);
- registers a resource type no provider SDK knows;
- registers two resources under one URN (the real engine rejects the second);
- leaves a component without ``register_outputs``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import pytest

from infra import mockanswers, mockengine
from infra import plan as plan_cli
from infra.core.config.stack import load_stack_file
from infra.core.observed import Observed
from infra.mockengine import Recording
from infra.mocklive import LiveAccount
from infra.sdkschema import args_class, unknown_properties

ROOT = Path(__file__).resolve().parents[2]


def sample_stacks(pattern: str = "*") -> list[str]:
    """The sample stacks' names (``stacks/Pulumi.<name>.yaml``) matching ``pattern``, sorted."""
    files = (ROOT / "stacks").glob(f"Pulumi.{pattern}.yaml")
    return sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in files)


# Kubernetes custom resources (kubernetes:<group>/<version>:<Kind> outside the SDK) carry the CRD's
# schema, not the SDK's; infra tests validate those objects separately.
_SCHEMALESS_PREFIX = "kubernetes:"


def sdk_problems(recording: Recording) -> list[str]:
    """Every registered input the provider SDKs do not know, and every unknown resource type."""
    problems: list[str] = []
    for r in recording.resources:
        if not (r.custom or r.remote):
            continue
        if args_class(r.type) is None:
            if not r.type.startswith(_SCHEMALESS_PREFIX):
                problems.append(f"{r.type} {r.name}: no provider SDK declares this type")
            continue
        problems += [
            f"{r.type} {r.name}: unknown input property {p}"
            for p in unknown_properties(r.type, r.inputs)
        ]
    return problems


def duplicate_urns(recording: Recording) -> list[str]:
    """URNs registered more than once, in first-registration order."""
    seen: set[str] = set()
    dupes: dict[str, None] = {}
    for r in recording.resources:
        if r.urn in seen:
            dupes[r.urn] = None
        seen.add(r.urn)
    return list(dupes)


def stack_source(source: str | Path | Mapping[str, Any], stack: str = "test") -> tuple[str, dict]:
    """(stack name, raw config) of a sample name under stacks/, a file path or a raw mapping."""
    if isinstance(source, Mapping):
        return stack, dict(source)
    path = Path(source)
    if not path.suffix:
        path = ROOT / "stacks" / f"Pulumi.{source}.yaml"
    return load_stack_file(path)


def run_stack(
    source: str | Path | Mapping[str, Any],
    stack: str = "test",
    *,
    observed: Observed | None = None,
    account: LiveAccount | None = None,
) -> Recording:
    """Run the program for a stack (a name under stacks/, a file path, or a raw config mapping)
    over ``observed`` (default: nothing running), or observing ``account`` as ``pulumi up``
    observes the live one."""
    stack, raw = stack_source(source, stack)
    recording = mockengine.run(raw, stack, observed=observed, account=account)
    problems = sdk_problems(recording)
    problems += [f"{urn}: registered more than once" for urn in duplicate_urns(recording)]
    missing = recording.components_without_outputs()
    problems += [f"{urn}: component never called register_outputs" for urn in missing]
    if problems:
        raise AssertionError("\n".join(problems))
    return recording


# The mock engine's answers as imported, before any test patches them (see ``sample``).
def _engine_state() -> tuple[Any, ...]:
    return (
        dict(mockanswers.INVOKES),
        dict(mockanswers.OUTPUTS),
        dict(mockanswers.CHILDREN),
        mockanswers.MOCK_ENDPOINT,
        mockanswers.MOCK_CA,
        mockanswers.MOCK_ACCOUNT,
        mockengine.RecordingMonitor.RegisterResource,
    )


_PRISTINE = _engine_state()


def _engine_is_pristine() -> bool:
    return _engine_state() == _PRISTINE


@functools.cache
def _sample(name: str) -> Recording:
    return run_stack(name)


def sample(name: str) -> Recording:
    """``run_stack(name)`` of an unchanged sample stack, run once per session and shared.

    Read-only: every test that reads it sees the same object (``tests/stack/conftest.py`` fails
    the session if one changed it). A test that patches the mock engine or changes the recording
    runs ``run_stack`` itself; calling this under a patch is refused, so a patched run is never
    cached as the sample's.
    """
    if not _engine_is_pristine():
        raise AssertionError(f"sample({name!r}) under a patched mock engine: use run_stack")
    rec = _sample(name)
    SHARED.setdefault(name, (rec, repr(rec)))
    return rec


# name -> (the shared recording, its repr when made), checked at the end of the session.
SHARED: dict[str, tuple[Recording, str]] = {}


def ignore_changes_seen(
    monkeypatch: pytest.MonkeyPatch, types: Collection[str]
) -> dict[str, dict[str, list[str]]]:
    """Type -> resource name -> the ``ignoreChanges`` the program registers it with, for each
    resource of ``types`` registered after this call (the recording does not keep them)."""
    seen: dict[str, dict[str, list[str]]] = {}
    original = mockengine.RecordingMonitor.RegisterResource

    def spy(self: Any, request: Any) -> Any:
        if request.type in types:
            seen.setdefault(request.type, {})[request.name] = list(request.ignoreChanges)
        return original(self, request)

    monkeypatch.setattr(mockengine.RecordingMonitor, "RegisterResource", spy)
    return seen


def sample_variant(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of sample stack ``name`` (same file name, so the same stack) with ``old`` -> ``new``."""
    text = (ROOT / "stacks" / f"Pulumi.{name}.yaml").read_text()
    assert old in text
    f = tmp_path / f"Pulumi.{name}.yaml"
    f.write_text(text.replace(old, new))
    return f


def gke_t4_variant(tmp_path: Path, old: str, new: str) -> Path:
    return sample_variant(tmp_path, "gke-t4", old, new)


EKS_G4DN_VERSION = 'kubernetesVersion: "1.35"'  # what the sample says


def eks_g4dn_at(tmp_path: Path, minor: str) -> Path:
    """Sample eks-g4dn on Kubernetes ``minor``, in its own folder under ``tmp_path``."""
    folder = tmp_path / minor
    folder.mkdir()
    return sample_variant(folder, "eks-g4dn", EKS_G4DN_VERSION, f'kubernetesVersion: "{minor}"')


def eks_version_bump_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """The ``--diff --json`` changes of sample eks-g4dn moved from kubernetesVersion 1.33 to 1.34."""
    old, new = eks_g4dn_at(tmp_path, "1.33"), eks_g4dn_at(tmp_path, "1.34")
    assert plan_cli.main(["--stack", str(new), "--diff", str(old), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["changes"]
