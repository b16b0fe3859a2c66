from . import greet  # noqa: F401
