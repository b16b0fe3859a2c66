"""The __SVC_ID__ connector: fills the {{field}} references of a text from the state.

The filling is the SDK's (svc.values.fill_fields): a connector calls the runtime
instead of carrying a copy of it.
"""

from __future__ import annotations

from typing import Any

from svc.values import fill_fields


def render(template: str, state: dict[str, Any]) -> str:
    """The template with each {{field}} replaced by the state's value."""
    return fill_fields(template, state)
