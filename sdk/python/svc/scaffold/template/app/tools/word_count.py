"""A tool: a plain function an LLM (or a node) can call."""

from svc import tool


@tool(
    "word_count",
    tags=("text",),
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)
def word_count(text: str) -> int:
    return len(text.split())
