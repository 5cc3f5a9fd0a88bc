"""How Go's ``gopkg.in/yaml.v3`` (Pulumi's YAML reader) reads a scalar, and how Pulumi prints one.

Pure code: the tag yaml.v3 resolves a plain scalar to (only ``true``/``false`` are booleans,
``0o17`` is an int, ``1:20`` a string), Go's integer and float syntax, timestamps, what yaml.v3
decodes a non-JSON tag into, and Go's text of a decoded key or scalar (``fmt.Sprintf("%v")``).
Sources: go-yaml/yaml v3 ``resolve.go`` (``resolveMapList``, ``yamlStyleFloat``,
``parseTimestamp``) and ``decode.go``; pulumi/pulumi ``sdk/go/common/resource/config/object.go``.
"""

from __future__ import annotations

import base64
import datetime
import math
import re
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode

from infra.core.errors import shown

MERGE_TAG = "tag:yaml.org,2002:merge"


STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
SCALAR_TAGS = (BOOL_TAG, INT_TAG, FLOAT_TAG, NULL_TAG)
# JSON's types (RFC 8259): what Helm values and Pulumi config objects carry.
JSON_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map")
)
# Kubernetes and Pulumi integers are int64 (JSON numbers beyond it lose precision or fail to decode).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# yaml.v3 resolve.go resolveMapList: the only plain scalars that are not strings or numbers.
_GO_YAML_MAP = {
    **dict.fromkeys(("true", "True", "TRUE", "false", "False", "FALSE"), BOOL_TAG),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), NULL_TAG),
    **dict.fromkeys((f"{s}.{w}" for s in ("", "+", "-") for w in ("inf", "Inf", "INF")), FLOAT_TAG),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), FLOAT_TAG),
    "<<": MERGE_TAG,
}
# YAML 1.1 booleans (https://yaml.org/type/bool.html, PyYAML's resolver) that yaml.v3 reads as strings.
YAML11_BOOLS = frozenset(
    w for b in ("yes", "no", "on", "off", "true", "false") for w in (b, b.title(), b.upper())
)
# yaml.v3 resolve.go yamlStyleFloat; Go's strconv.ParseFloat then refuses what overflows float64.
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# Go strconv.ParseInt(s, 0, 64) syntax: sign, then 0x/0o/0b prefixes or a leading 0 for octal.
_GO_INT = re.compile(
    r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)", re.ASCII
)
# YAML 1.1 base-60 ints and floats (https://yaml.org/type/int.html, /float.html); yaml.v3 drops them.
YAML11_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?", re.ASCII)
# yaml.v3 resolve.go parseTimestamp: allowedTimestampFormats, tried after "YYYY-".
_GO_TIMESTAMP = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?:(?:[Tt](?P<t1>[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)"
    r"(?P<z>Z|[-+][0-9]{2}:[0-9]{2}))|(?: (?P<t2>[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)))?",
    re.ASCII,
)


def go_yaml_tag(text: str) -> str:
    """The tag yaml.v3 (``resolve.go`` ``resolve``) gives a plain scalar.

    >>> [go_yaml_tag(t).rsplit(":", 1)[1] for t in ("yes", "on", "True", "0o17", "1e3", "1:20")]
    ['str', 'str', 'bool', 'int', 'float', 'str']
    """
    if text in _GO_YAML_MAP:
        return _GO_YAML_MAP[text]
    hint = text[:1]
    if hint == ".":  # strconv.ParseFloat(in): '_' only between digits (Python's float agrees)
        return FLOAT_TAG if _float_text(text) else STR_TAG
    if not hint or hint not in "+-0123456789":
        return STR_TAG  # letters (including y/n/on/off) resolve by the map above only
    if _timestamp(text) is not None:
        return TIMESTAMP_TAG
    plain = text.replace("_", "")
    number = go_int(text)
    if number is not None and -(2**63) <= number < 2**64:  # ParseInt, then ParseUint
        return INT_TAG
    if _YAML_STYLE_FLOAT.fullmatch(plain) and _float_text(plain):
        return FLOAT_TAG
    return STR_TAG


def go_int(text: str) -> int | None:
    """``strconv.ParseInt(strings.Replace(text, "_", "", -1), 0, ...)`` without the bit size."""
    plain = text.replace("_", "")
    if not _GO_INT.fullmatch(plain):
        return None
    sign = -1 if plain[0] == "-" else 1
    digits = plain.lstrip("+-")
    base = {"0x": 16, "0o": 8, "0b": 2}.get(digits[:2].lower())
    body = digits[2:] if base else digits
    base = base or (8 if digits.startswith("0") else 10)
    body = body.lstrip("0") or "0"
    if len(body) > 70:  # beyond 64 bits in every base: no need to convert thousands of digits
        return sign * 2**70
    return sign * int(body, base)


def _float_text(text: str) -> bool:
    """strconv.ParseFloat accepts ``text`` (finite: an overflow is an error there)."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def overflows(text: str) -> bool:
    """A float literal beyond float64 (``1.0e+400``): yaml.v3's ParseFloat fails, leaving a string."""
    if text.startswith("."):  # the '.' branch of resolve() hands ParseFloat the text as is
        return _is_float(text) and not _float_text(text)
    plain = text.replace("_", "")
    return bool(_YAML_STYLE_FLOAT.fullmatch(plain)) and _is_float(plain) and not _float_text(plain)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def finite(text: str) -> bool:
    """A float scalar is finite: not .nan/.inf and not overflowing (1.0e+400)."""
    return text not in _GO_YAML_MAP and _float_text(text.replace("_", ""))


def _timestamp(text: str) -> datetime.datetime | None:
    """yaml.v3 parseTimestamp: the time ``text`` names, or ``None`` (time.Parse checks the date)."""
    m = _GO_TIMESTAMP.fullmatch(text)
    if m is None:
        return None
    try:
        day = datetime.datetime(int(m["y"]), int(m["m"]), int(m["d"]), tzinfo=datetime.UTC)
        clock = m["t1"] or m["t2"]
        if clock:
            h, mi, s = clock.split(":")
            day = day.replace(hour=int(h), minute=int(mi), second=int(float(s)))
    except ValueError:
        return None
    return day


def go_time_string(text: str) -> str:
    """Go's time.Time.String() of a date or UTC time (what Pulumi's object.go stores)."""
    t = _timestamp(text)
    if t is None or (m := _GO_TIMESTAMP.fullmatch(text)) is None or m["z"] not in (None, "Z"):
        return text
    return t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def is_secure(node: MappingNode) -> bool:
    """pulumi/pulumi ``sdk/go/common/resource/config/object.go`` ``isSecureValue``: a map of length
    one whose ``secure`` value is a string is ciphertext, at any depth of a config value."""
    if len(node.value) != 1:
        return False
    key, value = node.value[0]
    return (
        isinstance(key, ScalarNode)
        and key.value == "secure"
        and isinstance(value, ScalarNode)
        and value.tag == STR_TAG
    )


def go_yaml_reads(node: Node) -> str:
    """What yaml.v3 decodes a node with a tag outside JSON into (``decode.go``): a mapping or a
    sequence whatever its tag (``!!set {a, b}`` is ``{a: null, b: null}``); a scalar with an
    unresolvable tag as its text, ``!!binary`` after base64 decoding (``resolved = string(data)``).
    """
    if isinstance(node, MappingNode):
        return "a mapping" + (" of its members to null" if node.tag.endswith(":set") else "")
    if not isinstance(node, ScalarNode):
        return "a list"
    text = node.value
    if node.tag == "tag:yaml.org,2002:binary":
        try:
            text = base64.b64decode("".join(text.split()), validate=True).decode("utf-8")
        except UnicodeDecodeError:
            return "bytes that are not UTF-8 text"
        except ValueError:  # "!!binary value contains invalid base64 data"
            return "nothing: it fails on invalid base64 data"
    return f"the text {shown(text, 40)}"


def go_key_text(key: ScalarNode) -> str:
    """A key as Pulumi's object.go stores it (``fmt.Sprintf("%v", k)``), for collision checks."""
    if key.tag == INT_TAG and (number := go_int(key.value)) is not None:
        return str(number)
    if key.tag == BOOL_TAG:
        return key.value.lower()
    return key.value


def go_key(key: Any) -> str:
    """``fmt.Sprintf("%v", k)`` of a decoded YAML key."""
    return "<nil>" if key is None else key if isinstance(key, str) else go_text(key)


def go_text(value: bool | int | float) -> str:
    """Go's text of a decoded scalar (``encoding/json`` and ``%v`` agree for these values)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)
