"""The mock engine's own wire handling agrees with the Pulumi SDK's."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest
from pulumi.runtime import rpc

from infra.mockengine import state_struct

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
