"""Shared grammar pieces of the field rules: apimachinery name patterns and the full-match compiler."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import AfterValidator

from infra.core.errors import shown

# --- Name grammars -------------------------------------------------------------------------------
# k8s.io/apimachinery/pkg/util/validation/validation.go: dns1123LabelFmt, DNS1123LabelMaxLength.
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
# validation.go: dns1123SubdomainFmt, DNS1123SubdomainMaxLength = 253.
_DNS1123_SUBDOMAIN = rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*"
# validation.go: qualifiedNameFmt ("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"), max 63.
_QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
# GCE resource names (RFC 1035): https://cloud.google.com/compute/docs/naming-resources
_RFC1035_LABEL = r"[a-z]([-a-z0-9]*[a-z0-9])?"


def _full(pattern: str) -> re.Pattern[str]:
    # Used with fullmatch: Python's "$" also matches before a final "\n", Go's regexp (which the
    # API servers run) does not. ASCII: Python's \w and \d also match non-ASCII letters and digits.
    return re.compile(pattern, re.ASCII)


_RE_DNS1123_LABEL = _full(_DNS1123_LABEL)
_RE_DNS1123_SUBDOMAIN = _full(_DNS1123_SUBDOMAIN)
_RE_QUALIFIED_NAME = _full(_QUALIFIED_NAME)
_RE_RFC1035_LABEL = _full(_RFC1035_LABEL)


def _matching(
    name: str, pattern: re.Pattern[str], reason: str, *, max_len: int | None = None, doc: str
) -> Callable[[str], str]:
    """A rule that passes ``v`` when ``pattern`` full-matches it (and it is at most ``max_len``).

    Else it raises ``ValueError("<v shortened> <reason>")``; ``reason`` names the grammar.
    """

    def check(v: str) -> str:
        if (max_len is not None and len(v) > max_len) or not pattern.fullmatch(v):
            raise ValueError(f"{shown(v)} {reason}")
        return v

    check.__name__ = check.__qualname__ = name
    check.__doc__ = doc
    return check


def _rule(check: Callable[[Any], Any]) -> AfterValidator:
    return AfterValidator(check)
