"""The import graph of ``src/dialeval`` has no cycle, follows the layer order, and only the command layer imports
``dialeval.commands``.

The graph is built from the source's AST, not by importing it: every ``import``
and ``from ... import`` anywhere in a module (top level and inside functions) is
an edge, except those under ``if TYPE_CHECKING:`` (they never run) and under ``if
__name__ == "__main__":`` (they run only when the module is the program, ``python -m``, and
then it runs as ``__main__``, never as the module another one imports: those are the
program's imports, the command layer's, not the module's). ``from
package import name`` is an edge to the submodule ``package.name`` when there is
one, else to ``package``. The packages above an imported module (importing
``a.b.c`` also runs ``a/__init__``) are not edges: a package's ``__init__`` that
re-exports its own submodules would otherwise always be a "cycle"; what is
checked are the imports the code names. Plugins loaded by name through entry
points (``dialeval.metric_prefixes``) are not imports and are not edges.

The layers, lowest first (:data:`LAYERS`), as the graph has them: a module imports
modules of its own layer and of the layers below, never above. The order of the
feature packages is the one their imports make today: ``stress`` uses the judges
and the report's charts, ``quality`` builds on ``stress`` and ``trained``.
No upward import is allowed (the last ones went when the quality metric's runtime
pieces moved into ``dialeval.metrics.quality`` and ``dialeval quality train`` left ``train``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "dialeval"

#: Layer name -> its packages and modules (a package stands for everything under it), lowest first.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("records", ("dialeval", "dialeval.errors", "dialeval.words", "dialeval.paths", "dialeval.signature",
                 "dialeval.registry", "dialeval.atomic", "dialeval.jsonl", "dialeval.schema", "dialeval.runinfo",
                 "dialeval.published", "dialeval.bulk")),
    # meta (correlations, agreement, bootstrap) needs only records: the commands and every feature use it
    ("data, metrics, backends", ("dialeval.data", "dialeval.metrics", "dialeval.models", "dialeval.backends",
                                 "dialeval.meta")),
    ("cache", ("dialeval.cache",)),
    ("engines", ("dialeval.engines",)),
    ("scoring", ("dialeval.scoring",)),
    ("front ends", ("dialeval.commands", "dialeval.api")),
    ("features", ("dialeval.human", "dialeval.judges", "dialeval.lmstyle", "dialeval.report")),
    ("stress", ("dialeval.stress",)),
    ("trained", ("dialeval.trained",)),
    ("quality", ("dialeval.quality",)),
    ("cli", ("dialeval.cli", "dialeval.__main__")),
)  # fmt: skip



def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_main_block(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators))  # fmt: skip


def _imports(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """Modules of ``dialeval`` that ``module`` imports (TYPE_CHECKING and ``__main__`` blocks left out)."""
    out: set[str] = set()

    def add(name: str) -> None:
        while name and name not in modules:  # an attribute of a module, or a module we do not have
            name = name.rpartition(".")[0]
        if name:
            out.add(name)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and (_is_type_checking(node) or _is_main_block(node)):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if target.split(".")[0] == PACKAGE:
                for alias in node.names:
                    add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    out.discard(module)
    return out


def import_graph() -> nx.DiGraph:
    files = {module_name(p): p for p in (SRC / PACKAGE).rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        tree = ast.parse(path.read_text("utf-8"))
        for target in _imports(tree, name, path.name == "__init__.py", set(files)):
            graph.add_edge(name, target)
    return graph


def layer_of(module: str) -> int:
    """Return the index in :data:`LAYERS` of ``module`` (its longest listed prefix); -1 when unlisted."""
    best, found = -1, ""
    for i, (_, names) in enumerate(LAYERS):
        for name in names:
            inside = module == name or (name != PACKAGE and module.startswith(name + "."))
            if inside and len(name) > len(found):
                best, found = i, name
    return best


def upward_imports(graph: nx.DiGraph) -> set[tuple[str, str]]:
    """Return the edges from a module to one in a higher layer."""
    return {(a, b) for a, b in graph.edges if layer_of(a) < layer_of(b)}


def _is_command_layer(module: str) -> bool:
    """The CLI: ``dialeval.cli``, ``dialeval.commands.*`` and each package's ``cli`` module."""
    return module == "dialeval.cli" or module.startswith("dialeval.commands") or module.endswith(".cli")


def test_the_graph_sees_function_level_imports_and_skips_type_checking_and_main_blocks():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from dialeval.engines import Engine\n"
        "def f():\n    from dialeval.metrics.resolve import family\n"
        "from .base import Metric\n"
        'if __name__ == "__main__":\n    from dialeval.engines import run\n'
    )
    modules = {"dialeval", "dialeval.engines", "dialeval.metrics", "dialeval.metrics.resolve", "dialeval.metrics.base"}
    got = _imports(ast.parse(source), "dialeval.metrics.style", False, modules)
    assert got == {"dialeval.metrics.resolve", "dialeval.metrics.base"}


def test_no_import_cycle_among_dialeval_modules():
    graph = import_graph()
    assert graph.number_of_nodes() > 100 and graph.number_of_edges() > 200  # the whole package was read
    cycles = sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)
    assert cycles == [], f"import cycles: {cycles}"


def test_only_the_command_layer_imports_commands_and_runner_is_gone():
    graph = import_graph()
    assert "dialeval.runner" not in graph
    offenders = sorted(
        (src, dst)
        for src, dst in graph.edges
        if dst.startswith("dialeval.commands") and not _is_command_layer(src)
    )
    assert offenders == []


def test_every_module_has_a_layer():
    assert sorted(m for m in import_graph() if layer_of(m) < 0) == []


def test_an_upward_import_is_found():
    graph = nx.DiGraph([("dialeval.scoring", "dialeval.commands.score"),
                        ("dialeval.commands.score", "dialeval.scoring"),
                        ("dialeval.stress.run", "dialeval.judges.metric"), ("dialeval.judges.metric", "dialeval.cli"),
                        ("dialeval.metrics.base", "dialeval.registry")])  # fmt: skip
    assert upward_imports(graph) == {("dialeval.scoring", "dialeval.commands.score"),
                                     ("dialeval.judges.metric", "dialeval.cli")}  # fmt: skip
    assert layer_of("dialeval.metrics.quality") == layer_of("dialeval.meta") < layer_of("dialeval.quality.cli")


def test_no_module_imports_a_higher_layer():
    upward = upward_imports(import_graph())
    names = [name for name, _ in LAYERS]
    new = sorted(f"{a} ({names[layer_of(a)]}) -> {b} ({names[layer_of(b)]})" for a, b in upward)
    assert new == [], "imports up a layer: " + "; ".join(new)
