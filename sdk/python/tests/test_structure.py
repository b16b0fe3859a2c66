"""The SDK's own structure, read from its source with `ast` (nothing is imported):

- no import cycle among its modules: every `import svc...`, `from svc...
  import` and relative import counts, at the top of a module, inside a
  function or under `if TYPE_CHECKING:` alike, as does an
  `importlib.import_module("svc...")` of a literal name; importing
  `svc.a.b` from outside the package `svc.a` also runs `svc/a/__init__.py`,
  so it counts as importing `svc.a` too (but for the root `svc`, whose
  `__init__.py` every import runs first; a name imported from `svc` itself,
  `from svc import __version__`, does count as importing `svc`);
- no module uses another module's private (`_`-prefixed) names, imported
  (`from svc.x import _y`) or through the module (`x._y`);
- no module over MAX_LINES lines.

The scaffold's template (svc/scaffold/template) is a project's source, not the SDK's.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SVC = Path(__file__).resolve().parents[1] / "svc"
MAX_LINES = 800


def module_files(root: Path = SVC) -> dict[str, Path]:
    """Every module of the package at `root` by its dotted name (the
    scaffold's template aside)."""
    template = root / "scaffold" / "template"
    out = {}
    for path in sorted(root.rglob("*.py")):
        if template in path.parents or "__pycache__" in path.parts:
            continue
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass
class Imports:
    """What one module imports (target module -> first line) and its uses
    of other modules' private names ("line N: what")."""

    module: str
    edges: dict[str, int] = field(default_factory=dict)
    private: list[str] = field(default_factory=list)

    def add(self, target: str, line: int) -> None:
        self.edges.setdefault(target, line)
        # Importing svc.a.b from outside svc.a runs svc/a/__init__.py first.
        parts = target.split(".")
        for i in range(2, len(parts)):
            package = ".".join(parts[:i])
            if not (self.module == package or self.module.startswith(package + ".")):
                self.edges.setdefault(package, line)


class Package:
    """The import graph of the package at `root`."""

    def __init__(self, root: Path = SVC):
        self.modules = module_files(root)
        self.graph = {m: self.read(m) for m in self.modules}

    def owner(self, name: str) -> str | None:
        """The longest prefix of `name` that is one of the package's modules."""
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            candidate = ".".join(parts[:i])
            if candidate in self.modules:
                return candidate
        return None

    def resolve(self, module: str, node: ast.ImportFrom) -> str | None:
        """The absolute name of a `from ... import`'s module (None: not svc's)."""
        if node.level:
            is_package = self.modules[module].name == "__init__.py"
            base = (module if is_package else module.rpartition(".")[0]).split(".")
            base = base[: len(base) - (node.level - 1)]
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module or ""
        return name if name == "svc" or name.startswith("svc.") else None

    def read(self, module: str) -> Imports:
        tree = ast.parse(self.modules[module].read_text(encoding="utf-8"))
        found = Imports(module)
        bound: dict[str, str] = {}  # a local name bound to one of the package's modules
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = self.owner(alias.name) if alias.name.startswith("svc") else None
                    if target is not None:
                        found.add(target, node.lineno)
                        if alias.asname:
                            bound[alias.asname] = target
            elif isinstance(node, ast.ImportFrom):
                base = self.resolve(module, node)
                if base is None:
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in self.modules:  # a submodule: `from svc import registry`
                        found.add(sub, node.lineno)
                        bound[alias.asname or alias.name] = sub
                        continue
                    found.add(self.owner(base) or base, node.lineno)
                    if is_private(alias.name):
                        found.private.append(f"line {node.lineno}: from {base} import {alias.name}")
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                arg = node.args[0] if node.args else None
                if (
                    name == "import_module"
                    and isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and arg.value.startswith("svc")
                    and self.owner(arg.value) is not None
                ):
                    found.add(self.owner(arg.value), node.lineno)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and bound.get(node.value.id, module) != module
                and is_private(node.attr)
            ):
                found.private.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        return found

    def cycles(self) -> list[list[str]]:
        """The strongly connected components of more than one module (or a
        module importing itself), by Tarjan's algorithm: the modules of each
        import one another in a circle."""
        graph = self.graph
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        components: list[list[str]] = []

        def visit(v: str) -> None:
            index[v] = low[v] = len(index)
            stack.append(v)
            on_stack.add(v)
            for w in graph[v].edges:
                if w not in graph:
                    continue
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1 or v in graph[v].edges:
                    components.append(sorted(component))

        for v in sorted(graph):
            if v not in index:
                visit(v)
        return components

    def cycles_described(self) -> list[str]:
        """Each strongly connected component: its modules and one cycle through them."""
        out = []
        for component in self.cycles():
            cycle = self.shortest_cycle(component)
            out.append(
                f"{len(component)} modules ({', '.join(component)}), for one: "
                f"{' -> '.join(cycle)}: {self.describe(cycle)}"
            )
        return out

    def shortest_cycle(self, component: list[str]) -> list[str]:
        """The shortest cycle through the component's first module (breadth first)."""
        members = set(component)
        start = component[0]
        paths = {start: [start]}
        queue = [start]
        while queue:
            v = queue.pop(0)
            for w in sorted(self.graph[v].edges):
                if w == start:
                    return [*paths[v], start]
                if w in members and w not in paths:
                    paths[w] = [*paths[v], w]
                    queue.append(w)
        return component

    def describe(self, cycle: list[str]) -> str:
        return "; ".join(
            f"{a} -> {b} (line {self.graph[a].edges[b]})" for a, b in itertools.pairwise(cycle)
        )

    def private_uses(self) -> Iterator[str]:
        for module in sorted(self.graph):
            for use in self.graph[module].private:
                yield f"{module}: {use}"


PACKAGE = Package()


def test_the_modules_import_each_other_without_a_cycle():
    found = PACKAGE.cycles_described()
    assert not found, f"{len(found)} import circle(s):\n" + "\n".join(f"- {c}" for c in found)


def test_no_module_uses_another_modules_private_names():
    uses = list(PACKAGE.private_uses())
    assert not uses, f"{len(uses)} use(s) of another module's private names:\n" + "\n".join(
        f"- {u}" for u in uses
    )


def test_no_module_is_over_the_line_limit():
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in PACKAGE.modules.items()}
    over = {m: n for m, n in sizes.items() if n > MAX_LINES}
    assert not over, f"over {MAX_LINES} lines: " + ", ".join(
        f"{PACKAGE.modules[m].relative_to(SVC.parent)} ({n})" for m, n in sorted(over.items())
    )


def test_the_lazy_names_of_svc_are_the_ones_type_checkers_see():
    """svc/__init__.py imports most names on first use from its `_EXPORTS`
    table; its `if TYPE_CHECKING:` imports say the same, which is how the
    import graph above sees those lazy imports."""
    tree = ast.parse(PACKAGE.modules["svc"].read_text(encoding="utf-8"))
    table = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets)
    )
    lazy = {k.value: v.value for k, v in zip(table.keys, table.values, strict=True)}
    checked = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    checked.update({alias.name: stmt.module for alias in stmt.names})
    assert lazy == checked
    assert set(lazy.values()) <= set(PACKAGE.modules)


def test_the_reader_sees_every_kind_of_import(tmp_path):
    """The reader itself, on a made-up package: function-level, relative,
    TYPE_CHECKING and import_module imports, the parent package's
    __init__, and private uses both ways."""
    pkg = tmp_path / "svc"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from svc.b import B\n"
        "def f():\n"
        "    from .sub import c\n"
        "    return c._hidden\n"
    )
    (pkg / "b.py").write_text(
        "import importlib\n"
        "def g():\n"
        "    return importlib.import_module('svc.a')\n"
        "from svc.sub.c import _secret\n"
    )
    (pkg / "sub" / "__init__.py").write_text("from svc.b import g\n")
    (pkg / "sub" / "c.py").write_text("from svc import a\nfrom . import d\n")
    (pkg / "sub" / "d.py").write_text("def _own(): ...\n_own()\n")
    package = Package(pkg)
    assert package.graph["svc.a"].edges.keys() == {"svc.b", "svc.sub", "svc.sub.c"}
    assert package.graph["svc.b"].edges.keys() == {"svc.a", "svc.sub", "svc.sub.c"}
    assert package.graph["svc.sub"].edges.keys() == {"svc.b"}
    # Inside svc.sub, its __init__ has run already.
    assert package.graph["svc.sub.c"].edges.keys() == {"svc.a", "svc.sub.d"}
    assert package.cycles() == [["svc.a", "svc.b", "svc.sub", "svc.sub.c"]]
    assert package.shortest_cycle(package.cycles()[0]) == ["svc.a", "svc.b", "svc.a"]
    assert list(package.private_uses()) == [
        "svc.a: line 6: c._hidden",
        "svc.b: line 4: from svc.sub.c import _secret",
    ]
