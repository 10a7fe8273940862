"""The shape every app keeps (README, Layout): one-way dependencies, the same modules, queries in selectors.

Read from the source with ``ast``, so a new module is held to the rules the day it is written.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Lowest first: an app may import the apps before it, never one after it. The graph (README, Layout):
# core → annotation → evaluation, and core → llm → {evaluation, artworks} → study → prolific.
LAYERS = ("core", "annotation", "llm", "evaluation", "artworks", "study", "prolific")
# What the order alone would allow and the graph does not: llm serves every model call and knows no
# corpus; the artwork pipeline and the survey need no corpus and no evaluation run; Prolific talks
# to the survey only.
FORBIDDEN = {
    ("llm", "annotation"),
    ("artworks", "annotation"),
    ("artworks", "evaluation"),
    ("study", "annotation"),
    ("study", "evaluation"),
    ("prolific", "annotation"),
    ("prolific", "llm"),
    ("prolific", "evaluation"),
    ("prolific", "artworks"),
}
DOMAIN_MODULES = ("models", "services", "selectors", "views", "apis", "forms", "tasks", "urls", "admin")
CORE_MODULES = ("models", "services", "selectors", "views", "apis", "forms", "urls")
LAYER_MODULES = set(DOMAIN_MODULES)
FLAT_SUFFIXED = re.compile(rf"^({'|'.join(DOMAIN_MODULES)})_\w+\.py$")


def _modules(app: str):
    for path in sorted((ROOT / app).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield path, name, path.name == "__init__.py"


def _imports(path: Path, module: str, is_package: bool):
    """(absolute module imported, names imported from it, line) for every import of a file."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base, [alias.name for alias in node.names], node.lineno


def _all_imports():
    for app in LAYERS:
        for path, module, is_package in _modules(app):
            for target, names, line in _imports(path, module, is_package):
                yield app, path.relative_to(ROOT), module, target, names, line


def test_it_keeps_every_app_dependency_one_way():
    wrong = []
    for app, path, _module, target, _names, line in _all_imports():
        top = target.split(".")[0]
        if top not in LAYERS or top == app:
            continue
        if LAYERS.index(top) > LAYERS.index(app) or (app, top) in FORBIDDEN:
            wrong.append(f"{path}:{line} ({app} imports {target})")
    assert wrong == []


def test_it_gives_every_app_the_same_modules():
    missing = []
    for app in LAYERS:
        wanted = CORE_MODULES if app == "core" else DOMAIN_MODULES
        for module in wanted:
            if not (ROOT / app / f"{module}.py").exists() and not (ROOT / app / module / "__init__.py").exists():
                missing.append(f"{app}.{module}")
    assert missing == []


def test_it_has_no_flat_suffixed_modules():
    flat = [str(path.relative_to(ROOT)) for app in LAYERS for path in (ROOT / app).glob("*.py")]
    assert [path for path in flat if FLAT_SUFFIXED.match(Path(path).name)] == []


def test_it_never_lets_an_api_import_a_view():
    wrong = [
        f"{path}:{line} imports {target}"
        for _app, path, module, target, _names, line in _all_imports()
        if ".apis" in f".{module}" and target.split(".")[0] in LAYERS and re.search(r"(^|\.)views(\.|$)", target)
    ]
    assert wrong == []


def test_it_never_imports_another_modules_private_names():
    wrong = [
        f"{path}:{line} imports {name} from {target}"
        for _app, path, module, target, names, line in _all_imports()
        for name in names
        if name.startswith("_") and not name.startswith("__") and target != module
    ]
    assert wrong == []


@pytest.mark.parametrize("layer", ["views", "apis"])
def test_it_keeps_queries_in_selectors(layer):
    """A view or API asks a selector; ``Model.objects`` there means a query written in the wrong place."""
    wrong = []
    for app in LAYERS:
        for path, module, _is_package in _modules(app):
            if f".{layer}" not in f".{module}":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and node.attr == "objects":
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert wrong == []


def test_it_defines_the_dataset_fixture_once_per_test_package():
    """Each test package's ``dataset`` lives in its conftest.py; a module's own would mean something else there.

    A module that needs other content builds it under a fixture of its own name (``claims_dataset``).
    """
    wrong = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == "conftest.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("tests")):
                # A fixture imported from another test module is defined here all the same.
                if any((alias.asname or alias.name) == "dataset" for alias in node.names):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} imports dataset")
                continue
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                target = call.func if call else decorator
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name != "fixture":
                    continue
                renamed = [getattr(k.value, "value", None) for k in (call.keywords if call else []) if k.arg == "name"]
                if (renamed[0] if renamed else node.name) == "dataset":
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} defines dataset")
    assert wrong == []


def _reexport_packages():
    for app in LAYERS:
        for kind in ("services", "selectors"):
            yield from sorted((ROOT / app / kind).rglob("__init__.py"))


@pytest.mark.parametrize("init", list(_reexport_packages()), ids=lambda p: str(p.relative_to(ROOT)))
def test_it_reexports_the_same_way_in_every_services_and_selectors_package(init):
    """Each package names what callers use once: ``from .module import name`` for every public name of
    its own modules, and ``__all__`` listing exactly those (no star imports, nothing from elsewhere)."""
    tree = ast.parse(init.read_text())
    package = init.parent
    imported, wrong, listed = set(), [], None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level != 1 or not node.module or any(alias.name == "*" for alias in node.names):
                wrong.append(f"line {node.lineno}: only `from .<module> import names`")
                continue
            imported |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            wrong.append(f"line {node.lineno}: no plain imports")
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            listed = set(ast.literal_eval(node.value))
    modules = {p.stem for p in package.glob("*.py") if p.name != "__init__.py"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    assert wrong == []
    assert listed == imported, "__all__ must list exactly what the package imports"
    assert imported, f"{package.relative_to(ROOT)} re-exports nothing (modules: {sorted(modules)})"
