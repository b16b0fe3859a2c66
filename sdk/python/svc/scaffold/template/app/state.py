"""The graph state: every field a node may read or write."""

import operator
from typing import Annotated, TypedDict


class State(TypedDict, total=False):
    name: str
    greeting: str
    words: int
    # Appended to, never replaced: each node's messages are added at the end.
    messages: Annotated[list[dict], operator.add]
