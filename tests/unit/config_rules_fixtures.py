"""What the field-rule modules share: the message a rule refuses a value with."""

from __future__ import annotations

import pytest


def refused(check, value, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as e:
        check(value, *args, **kwargs)
    return str(e.value)
