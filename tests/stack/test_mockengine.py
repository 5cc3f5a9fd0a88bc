"""The mock engine's own wire handling agrees with the Pulumi SDK's."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc

import infra.program
from infra import mockengine
from infra.core.catalog import Catalog
from infra.mockengine import SECRET, state_struct
from tests.stack.harness import run_stack

SIG = rpc._special_sig_key  # pyright: ignore[reportPrivateUsage]

STATES: list[dict[str, Any]] = [
    {},
    {"name": "ml", "count": 3, "ratio": 0.5, "on": True, "gone": None},
    {"tags": {"a": "1", "empty": None}, "list": [1, None, "x", [True, {"k": []}]]},
    {"tuple": ("a", 2), "nested": {"deep": {"deeper": [{"x": 1.25}]}}},
    {"kubeconfig": {SIG: rpc._special_secret_sig, "value": "{}"}},  # pyright: ignore[reportPrivateUsage]
    {"id": rpc.UNKNOWN, "big": 2**60, "neg": -7},
]


@pytest.mark.parametrize("state", STATES, ids=range(len(STATES)))
def test_state_struct_is_what_the_sdk_serializer_sends_for_json_states(state):
    loop = asyncio.new_event_loop()
    try:
        sdk = loop.run_until_complete(rpc.serialize_properties(state, {}))
    finally:
        loop.close()
    assert state_struct(state) == sdk


def test_state_struct_sends_a_non_json_value_through_the_sdk_serializer():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        asset = {"file": pulumi.StringAsset("x")}
        sdk = loop.run_until_complete(rpc.serialize_properties(asset, {}))
        assert state_struct(asset) == sdk and sdk["file"][SIG] == rpc._special_asset_sig  # pyright: ignore[reportPrivateUsage]
        with pytest.raises(ValueError, match="unexpected input of type object"):
            state_struct({"x": object()})
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def _answers_as_the_sdk(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any, Any, Any]]:
    """Send every registration to RecordingMonitor and to a spare SDK MockMonitor as well."""
    pairs: list[tuple[Any, Any, Any, Any]] = []
    ours = mockengine.RecordingMonitor.RegisterResource

    def both(self: mockengine.RecordingMonitor, request: Any) -> Any:
        sdk = pulumi_mocks.MockMonitor(self.catalog_mocks)
        expected = sdk.RegisterResource(request)
        got = ours(self, request)
        pairs.append((got, expected, self.resources.get(got.urn), sdk.resources.get(got.urn)))
        return got

    monkeypatch.setattr(mockengine.RecordingMonitor, "RegisterResource", both)
    return pairs


@pytest.mark.parametrize("stack", ["eks-hpc", "eks-existing", "gke-t4", "onprem-containerd"])
def test_every_registration_is_answered_and_kept_as_the_sdks_mock_monitor_would(stack, monkeypatch):
    pairs = _answers_as_the_sdk(monkeypatch)
    run_stack(stack)
    assert len(pairs) >= 5
    for got, expected, kept, sdk_kept in pairs:
        assert got == expected  # urn, id and the state struct, byte for byte
        assert kept == sdk_kept  # what getResource / ReadResource read back (None id: component)


def test_a_resource_reference_in_the_state_is_answered_as_the_sdk_would(monkeypatch):
    def program() -> dict[str, Any]:
        first = pulumi.CustomResource("test:index:First", "first", {"size": 1})
        pulumi.CustomResource("test:index:Second", "second", {"ref": first})
        return {}

    pairs = _answers_as_the_sdk(monkeypatch)
    monkeypatch.setattr(infra.program, "run", program)
    rec = mockengine.run({}, "refs", Catalog.load())
    (second,) = [got for got, *_ in pairs if got.urn.endswith("::second")]
    assert all(got == expected and kept == sdk_kept for got, expected, kept, sdk_kept in pairs)
    assert second.object["ref"]  # the reference survived the round trip
    assert rec.one("test:index:Second").inputs["ref"] != SECRET
