from . import word_count  # noqa: F401
