"""Duration keys take exactly what their receiver parses: one test table per receiver.

Go's time.ParseDuration is checked against its own test vectors (golang/go src/time/time_test.go
@ f7396aaea029, parseDurationTests and parseDurationErrorTests); the receivers' tables follow the
receivers' sources (cluster-autoscaler flags.go flag.Duration; the vendored NodePool CRD's patterns
and kubernetes-sigs/karpenter pkg/apis/v1/duration.go).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import BaseModel

from infra.core import rules
from infra.core.config import eks, gke, kubernetes, operator
from infra.core.config.stack import parse
from infra.core.eks.karpenter import crds
from infra.core.errors import ConfigErrors
from infra.core.rules.durations import (
    NODEPOOL_DURATIONS,
    GoDurationError,
    go_duration_ns,
    nodepool_pattern,
)

NS, US, MS, S, M, H = 1, 10**3, 10**6, 10**9, 60 * 10**9, 3600 * 10**9

# time_test.go parseDurationTests: input -> Duration (nanoseconds)
PARSE_DURATION_TESTS = [
    ("0", 0),
    ("5s", 5 * S),
    ("30s", 30 * S),
    ("1478s", 1478 * S),
    ("-5s", -5 * S),
    ("+5s", 5 * S),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * S),
    ("5.6s", 5 * S + 600 * MS),
    ("5.s", 5 * S),
    (".5s", 500 * MS),
    ("1.0s", 1 * S),
    ("1.00s", 1 * S),
    ("1.004s", 1 * S + 4 * MS),
    ("1.0040s", 1 * S + 4 * MS),
    ("100.00100s", 100 * S + 1 * MS),
    ("10ns", 10 * NS),
    ("11us", 11 * US),
    ("12\u00b5s", 12 * US),  # U+00B5
    ("12\u03bcs", 12 * US),  # U+03BC
    ("13ms", 13 * MS),
    ("14s", 14 * S),
    ("15m", 15 * M),
    ("16h", 16 * H),
    ("3h30m", 3 * H + 30 * M),
    ("10.5s4m", 4 * M + 10 * S + 500 * MS),
    ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
    ("1h2m3s4ms5us6ns", 1 * H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
    ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
    ("52763797000ns", 52763797000 * NS),
    ("0.3333333333333333333h", 20 * M),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("-9223372036s854ms775us808ns", -(1 << 63)),
    ("-2562047h47m16.854775808s", -(1 << 63)),
    ("0.100000000000000000000h", 6 * M),
    ("0.830103483285477580700h", 49 * M + 48 * S + 372539827 * NS),
]
# time_test.go parseDurationErrorTests (the invalid-UTF-8 inputs as the code points YAML gives)
PARSE_DURATION_ERROR_TESTS = [
    "",
    "3",
    "-",
    "s",
    ".",
    "-.",
    ".s",
    "+.s",
    "1d",
    "\x85\x85",
    "\xffff",
    "hello \xffff world",
    "\ufffd",
    "\ufffd hello \ufffd world",
    "9223372036854775810ns",
    "9223372036854775808ns",
    "-9223372036854775809ns",
    "9223372036854776us",
    "3000000h",
    "9223372036854775.808us",
    "9223372036854ms775us808ns",
]


@pytest.mark.parametrize(("text", "want"), PARSE_DURATION_TESTS)
def test_go_parse_duration_gives_its_own_test_vectors_values(text, want):
    assert go_duration_ns(text) == want


@pytest.mark.parametrize("text", PARSE_DURATION_ERROR_TESTS)
def test_go_parse_duration_refuses_its_own_error_vectors_quoting_the_input(text):
    with pytest.raises(GoDurationError) as e:
        go_duration_ns(text)
    if text.isascii() and text.isprintable():
        assert f'"{text}"' in str(e.value)  # the expect column: the quoted input


def test_go_parse_duration_round_trips_the_longest_duration():
    # TestParseDurationRoundTrip: Duration(math.MaxInt64).String() parses back
    assert go_duration_ns(rules.durations.LONGEST) == (1 << 63) - 1


# --- receiver: the cluster-autoscaler's flag.Duration flags (time.ParseDuration) -------------
CLUSTER_AUTOSCALER = [
    ("10m", True),
    ("1h30m", True),  # compound
    ("1.5h", True),  # fraction
    ("300ms", True),
    ("0", True),
    ("2562047h", True),
    ("2562048h", False),  # beyond int64 nanoseconds
    ("10d", False),  # no such unit
    ("Never", False),
    ("10", False),  # missing unit
    ("", False),
]
# --- receiver: NodePool consolidateAfter (CRD pattern, then NillableDuration) ------------------
CONSOLIDATE_AFTER = [
    ("10m", True),
    ("1h30m", True),
    ("0s", True),
    ("Never", True),
    ("1.5h", False),  # the CRD's pattern takes whole numbers only
    ("300ms", False),
    ("0", False),
    ("never", False),
    ("9999999999h", False),  # matches the pattern, the decoder's ParseDuration refuses it
]
# --- receiver: NodePool terminationGracePeriod (CRD pattern, then *metav1.Duration) -------------
TERMINATION_GRACE_PERIOD = [
    ("48h", True),
    ("6h30m", True),
    ("Never", False),  # metav1.Duration has no Never
    ("2d", False),
    ("1.5h", False),
    ("99999999999h", False),
]


# --- receiver: GKE maxRunDuration (google.protobuf.Duration JSON, at most the flex-start 7 days) -
MAX_RUN_DURATION = [
    ("86400s", True),
    ("604800s", True),
    ("3.5s", True),  # protobuf's own example
    ("1.000000001s", True),  # nine fractional digits
    ("604800.000000000s", True),
    ("604800.000000001s", False),  # beyond seven days by a nanosecond
    ("1.0000000001s", False),  # ten fractional digits
    ("1.s", True),  # protojson parseDuration's own examples: 1.s, .1s, +1s
    (".5s", True),
    ("+60s", True),
    ("01s", False),  # a leading 0 is the whole integer part
    ("s", False),
    ("0s", False),
    ("-1s", False),
    ("24h", False),  # a Go duration, not a protobuf one
    ("86400", False),
]


@pytest.mark.parametrize(("value", "ok"), MAX_RUN_DURATION)
def test_max_run_duration_takes_what_a_protobuf_duration_parses_up_to_seven_days(value, ok):
    try:
        rules.check_max_run_duration(value)
    except ValueError as e:
        assert not ok, e
    else:
        assert ok


SCALE_DOWN = "cluster.autoscaler.scaleDownUnneededTime"


def _eks(autoscaler: dict[str, Any]) -> dict[str, Any]:
    return {
        "aws:region": "us-west-2",
        "gpu-infra:platform": "eks",
        "gpu-infra:cluster": {
            "name": "d",
            "location": "us-west-2",
            "kubernetesVersion": "1.35",
            "autoscaler": autoscaler,
        },
        "gpu-infra:gpuPools": [{"name": "g", "machineType": "g6.2xlarge", "maxNodes": 2}],
    }


def _refused(raw: dict[str, Any], key: str) -> str | None:
    try:
        parse(copy.deepcopy(raw), "s")
    except ConfigErrors as e:
        return next((i.reason for i in e.issues if i.path == key), None)
    return None


@pytest.mark.parametrize(("value", "ok"), CLUSTER_AUTOSCALER)
def test_scale_down_unneeded_time_takes_what_the_cluster_autoscaler_flag_parses(value, ok):
    reason = _refused(_eks({"scaleDownUnneededTime": value}), SCALE_DOWN)
    assert (reason is None) == ok, reason
    assert ok or "the cluster-autoscaler's flag parser would refuse it" in str(reason)


@pytest.mark.parametrize(("value", "ok"), CONSOLIDATE_AFTER)
def test_scale_down_unneeded_time_with_karpenter_takes_what_consolidate_after_takes(value, ok):
    reason = _refused(_eks({"kind": "karpenter", "scaleDownUnneededTime": value}), SCALE_DOWN)
    assert (reason is None) == ok, reason


@pytest.mark.parametrize(("value", "ok"), TERMINATION_GRACE_PERIOD)
def test_termination_grace_period_takes_what_the_nodepool_takes(value, ok):
    raw = _eks({"kind": "karpenter", "terminationGracePeriod": value})
    reason = _refused(raw, "cluster.autoscaler.terminationGracePeriod")
    assert (reason is None) == ok, reason


def test_nodepool_duration_patterns_are_the_vendored_crds():
    schema = crds.vendored("NodePool")["openAPIV3Schema"]
    for field, (path, never) in NODEPOOL_DURATIONS.items():
        node = schema
        for part in path:
            node = node["properties"][part]
        assert nodepool_pattern(field).pattern == node["pattern"]
        assert bool(nodepool_pattern(field).fullmatch("Never")) == never


def _models() -> list[type[BaseModel]]:
    mods = (eks, gke, kubernetes, operator)
    return [
        m
        for mod in mods
        for m in vars(mod).values()
        if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == mod.__name__
    ]


DURATION_RULES = {
    rules.check_go_duration,
    rules.check_termination_grace_period,
    rules.check_max_run_duration,
}


def test_every_duration_typed_key_of_the_schema_has_its_receivers_rule():
    """A string field named like a duration carries one of the receivers' rules; the one whose
    receiver follows ``kind`` is checked by its model (tested above)."""
    found = {}
    for model in _models():
        for name, f in model.model_fields.items():
            if not name.endswith(("_time", "_duration", "_period", "_after")):
                continue
            checks = {getattr(m, "func", None) for m in f.metadata}
            found[f"{model.__name__}.{name}"] = checks & DURATION_RULES
    assert found.pop("EksAutoscalerSpec.scale_down_unneeded_time") == set()  # by kind
    assert found == {
        "EksAutoscalerSpec.termination_grace_period": {rules.check_termination_grace_period},
        "FlexStartSpec.max_run_duration": {rules.check_max_run_duration},
    }
