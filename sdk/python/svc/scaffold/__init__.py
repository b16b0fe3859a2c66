"""`new`: a project scaffolded from the files under template/.

The Rust `svc new` ships the very same files: template/MANIFEST lists them
(one relative path a line) and the only substitutions are the plain string
replacements of `{{name}}` (the project name) and `{{package}}` (the name
with `-` replaced by `_`). The project goes to `<dir>/<name>`.
"""

from __future__ import annotations

import re
import shutil
from importlib import resources
from pathlib import Path

NAME = re.compile(r"[a-z][a-z0-9_-]*")


def _template(rel: str) -> str:
    node = resources.files(__name__) / "template"
    for part in rel.split("/"):
        node = node / part
    return node.read_text("utf-8")


def template_files() -> list[str]:
    manifest = _template("MANIFEST")
    return [line.strip() for line in manifest.splitlines() if line.strip()]


def render(text: str, name: str) -> str:
    return text.replace("{{name}}", name).replace("{{package}}", name.replace("-", "_"))


def new_project(name: str, directory: str | Path | None = None, *, force: bool = False) -> Path:
    """Writes a new project to `<directory>/<name>` and returns its path.

    A non-empty target is refused unless `force`, which replaces that one
    directory and nothing else.
    """
    if not NAME.fullmatch(name):
        raise ValueError(
            f"invalid project name {name!r}: use a lowercase letter, then lowercase "
            "letters, digits, '_' or '-'"
        )
    target = Path(directory if directory is not None else ".") / name
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise FileExistsError(f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()):
        if not force:
            raise FileExistsError(f"{target} is not empty: pass --force to replace it")
        shutil.rmtree(target)
    for rel in template_files():
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(render(_template(rel), name), "utf-8")
    return target
