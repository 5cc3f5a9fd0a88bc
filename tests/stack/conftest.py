"""Stack-test fixtures: the shared sample recordings stay as the program registered them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.stack import harness


@pytest.fixture(scope="session", autouse=True)
def shared_samples_unchanged() -> Iterator[None]:
    """Fail the session when a test changed a recording ``harness.sample`` shares."""
    yield
    changed = sorted(n for n, (rec, made) in harness.SHARED.items() if repr(rec) != made)
    assert not changed, f"a test changed the shared sample recordings of {changed}"
