"""The __SVC_ID__ connector: fills the {{field}} references of a text from the state."""

from __future__ import annotations

import re
from typing import Any

from svc.values import text

_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def render(template: str, state: dict[str, Any]) -> str:
    """The template with each {{field}} replaced by the state's value."""
    return _FIELD.sub(lambda m: text(state.get(m.group(1))), template)
