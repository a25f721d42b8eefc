"""The house's shape, checked (docs/layout.md; DESIGN.md section 1): the engine package never imports
Blender; its modules import in one direction, floor by floor, with no circles (imports inside
functions count: a circle hidden there is a circle); no module is too long to hold in one's head;
and nothing outside ``motionctl/engines/`` names an engine (the command line, the panels, the
operators and the contract test are generated from the registry)."""

import ast
import os
import re

import pytest

from conftest import ROOT

PACKAGE = os.path.join(ROOT, "motionctl")
# Floors, lowest first: a module imports only from its own floor or below.
FLOORS = {"ground": 0, "body": 1, "io": 2, "play": 3, "engines": 4, "evaluate": 5, "retarget": 5, "cli": 6,
          "__main__": 6, "rootframe": 1}  # the root frame's heading is the hips' facing: it rests on the body
MAX_LINES = 520  # "about 500": past this a module is split by what it does


def modules() -> dict:
    """{dotted module name: path} of the engine package."""
    out = {}
    for dirpath, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].split(os.sep)
                out[".".join(rel[:-1] if rel[-1] == "__init__" else rel)] = os.path.join(dirpath, f)
    return out


def imports(path: str, name: str, known: set) -> set:
    """The package modules ``path`` (module ``name``) imports, anywhere in it (functions too)."""
    is_package = path.endswith("__init__.py")
    package = name if is_package else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # "from package import module" imports the module; "from module import name", the module
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        for t in targets:
            while t and t not in known:
                t = t.rsplit(".", 1)[0] if "." in t else ""
            if t and t != name:
                out.add(t)
    return out


def floor_of(name: str) -> int:
    parts = name.split(".")
    if len(parts) == 1:
        return FLOORS["ground"]
    return FLOORS.get(parts[1], FLOORS["ground"])


@pytest.fixture(scope="module")
def graph() -> dict:
    mods = modules()
    return {m: imports(p, m, set(mods)) for m, p in mods.items()}


def test_no_import_circles_even_inside_functions(graph):
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"


def test_each_floor_imports_only_its_own_floor_and_below(graph):
    wrong = [(a, b) for a, targets in graph.items() for b in targets if floor_of(b) > floor_of(a)]
    assert not wrong, "imports from a higher floor: " + ", ".join(f"{a} -> {b}" for a, b in sorted(wrong))


def test_the_engine_package_never_imports_blender():
    for name, path in modules().items():
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] in ("bpy", "mathutils", "bpy_extras", "gpu") for n in names), name


def test_no_module_is_past_the_size_a_reader_can_hold():
    long = {m: n for m, p in modules().items() if (n := sum(1 for _ in open(p, encoding="utf-8"))) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def engine_references(tree, words: set):
    """(line, text) of each place ``tree`` picks an engine by name: compared with a name, indexing
    the registry or the settings by one (``ENGINES["graph"]``, ``st.engines.graph``), passing one as
    ``engine=``."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in words and re.search(r"\bengines$", ast.unparse(node.value)):
            yield node.lineno, f".{node.attr}"
        if not (isinstance(node, ast.Constant) and node.value in words):
            continue
        up = parents.get(node)
        if isinstance(up, ast.Compare) or (isinstance(up, (ast.Tuple, ast.List, ast.Set)) and
                                           isinstance(parents.get(up), ast.Compare)):
            yield node.lineno, f"compared with {node.value!r}"
        elif isinstance(up, ast.Subscript) and re.search(r"ENGINES$|engines$", ast.unparse(up.value)):
            yield node.lineno, ast.unparse(up)
        elif isinstance(up, ast.keyword) and up.arg == "engine":
            yield node.lineno, f"engine={node.value!r}"
        elif isinstance(up, ast.Call) and ast.unparse(up.func).split(".")[-1] in ("getattr", "model_entry", "keep_model",
                                                                                    "picture_name", "engine_settings"):
            yield node.lineno, ast.unparse(up)


def test_nothing_outside_the_engines_names_an_engine():
    """No engine picked by name outside the engine folders and the engines' own Blender modules
    (``operators/engines/``, ``panels/engines/``), the contract test included."""
    from motionctl.engines import ENGINES

    words = set(ENGINES) | {e.word for e in ENGINES.values()}
    places = [os.path.join(ROOT, d) for d in ("motionctl", "operators", "panels")]
    places.append(os.path.join(ROOT, "tests", "test_engine_contract.py"))
    exempt = [os.path.join(ROOT, "motionctl", "engines"), os.path.join(ROOT, "operators", "engines"),
              os.path.join(ROOT, "panels", "engines")]
    found = []
    for place in places:
        paths = [place] if place.endswith(".py") else [os.path.join(d, f) for d, _, fs in os.walk(place) for f in fs
                                                       if f.endswith(".py")]
        for path in paths:
            if any(path.startswith(e + os.sep) for e in exempt):
                continue
            tree = ast.parse(open(path, encoding="utf-8").read())
            found += [f"{os.path.relpath(path, ROOT)}:{line} {text}" for line, text in engine_references(tree, words)]
    assert not found, "engines named outside motionctl/engines/: " + "; ".join(found)
