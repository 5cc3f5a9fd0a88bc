"""The mock engine's own wire handling agrees with the Pulumi SDK's."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import pulumi
import pytest
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc

import infra.program
from infra import mockengine
from infra.core.catalog.vendored import Catalog
from infra.mockengine import state_struct
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
        assert state_struct(asset) == sdk
        assert sdk.get_or_create_struct("file")[SIG] == rpc._special_asset_sig  # pyright: ignore[reportPrivateUsage]
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


def _by_name(value: Any) -> Any:
    if isinstance(value, pulumi.Resource):
        return f"{type(value).__name__} {value._name}"  # pyright: ignore[reportPrivateUsage]
    if isinstance(value, tuple | list):
        return [_by_name(v) for v in value]
    if isinstance(value, dict):
        return {k: _by_name(v) for k, v in value.items()}
    return value


class _First(pulumi.CustomResource):
    def __init__(self, name: str, props: dict[str, Any] | None = None, opts: Any = None) -> None:
        super().__init__("test:index:First", name, props or {}, opts)


class _TestModule(rpc.ResourceModule):
    """Lets a reference to a test:index resource deserialize into a resource object."""

    def version(self) -> None:
        return None

    def construct(self, name: str, typ: str, urn: str) -> pulumi.Resource:
        return _First(name, opts=pulumi.ResourceOptions(urn=urn))


def test_a_resource_reference_in_the_state_is_answered_as_the_sdk_would(monkeypatch):
    monkeypatch.setitem(rpc._RESOURCE_MODULES, "test:index", [_TestModule()])  # pyright: ignore[reportPrivateUsage]

    def program(*_: Any) -> dict[str, Any]:
        first = _First("first", {"size": 1})
        pulumi.CustomResource("test:index:Second", "second", {"ref": first})
        return {}

    pairs = _answers_as_the_sdk(monkeypatch)
    monkeypatch.setattr(infra.program, "run", program)
    rec = mockengine.run({}, "refs", Catalog.load())
    # Each monitor rehydrates its own resource object from the reference: compare them by name.
    for got, expected, kept, sdk_kept in pairs:
        assert got == expected
        assert _by_name(kept) == _by_name(sdk_kept)
    # The reference came back as a resource (not JSON: the SDK's serializer sent it).
    assert rec.one("test:index:Second").inputs["ref"] == "[resource _First]"


def test_closing_a_loop_cancels_tasks_that_never_ran_so_no_coroutine_is_left_unawaited():
    loop = asyncio.new_event_loop()

    async def never_started() -> None:
        raise AssertionError("a cancelled task's coroutine must not run")

    task = loop.create_task(never_started())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        mockengine.close_loop(loop)
        gc.collect()
    assert task.cancelled() and loop.is_closed()
    assert not [w for w in seen if "never awaited" in str(w.message)]


def test_a_registration_with_transforms_takes_the_sdks_own_path_and_is_still_recorded(
    monkeypatch,
):
    seen: list[tuple[str, int]] = []
    new_resource = mockengine.CatalogMocks.new_resource

    def spy(self: mockengine.CatalogMocks, args: Any) -> Any:
        seen.append((args.name, len(args.transforms or [])))
        return new_resource(self, args)

    def tag(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        return pulumi.ResourceTransformResult(props={**args.props, "tagged": True}, opts=args.opts)

    def program(*_: Any) -> dict[str, Any]:
        parent = pulumi.ComponentResource("test:index:Group", "group")
        pulumi.CustomResource(
            "test:index:Leaf",
            "leaf",
            {"size": 1},
            pulumi.ResourceOptions(parent=parent, transforms=[tag]),
        )
        parent.register_outputs({})
        return {}

    monkeypatch.setattr(mockengine.CatalogMocks, "new_resource", spy)
    monkeypatch.setattr(infra.program, "run", program)
    rec = mockengine.run({}, "transforms", Catalog.load())
    assert ("leaf", 1) in seen  # MockMonitor resolved the transform for new_resource
    leaf = rec.one("test:index:Leaf")
    assert leaf.id == "leaf_id" and leaf.parent == rec.one("test:index:Group").urn
    assert rec.one("test:index:Group").id is None


def test_a_second_run_in_one_process_parents_its_components_to_its_own_stack():
    # pulumi.runtime.set_mocks keeps a root Stack resource already set: a fleet's second stack
    # (and every later test) would otherwise hang its components under the first stack's URN.
    first = run_stack("onprem-containerd")
    second = run_stack("gke-t4")
    for rec, stack in ((first, "onprem-containerd"), (second, "gke-t4")):
        roots = {r.parent for r in rec.resources if r.parent and "$" not in r.parent.split("::")[2]}
        assert roots == {f"urn:pulumi:{stack}::gpu-infra::pulumi:pulumi:Stack::gpu-infra-{stack}"}
