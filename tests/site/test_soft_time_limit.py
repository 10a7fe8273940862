"""No broad ``except`` in any app swallows a Celery soft time limit.

Celery stops a task that runs past CELERY_TASK_SOFT_TIME_LIMIT by raising SoftTimeLimitExceeded
inside it, wherever it is; an ``except Exception`` that carries on turns that into a success and
the task goes on past its limit. The scan reads every module of every app of this repository
(the installed apps that live here, and any package with an apps.py), so a new app is covered
without touching this file.
"""

import ast
from pathlib import Path

from django.apps import apps

ROOT = Path(__file__).resolve().parents[2]
BROAD = {"Exception", "BaseException"}


def _names(node) -> set[str]:
    if node is None:
        return {"BaseException"}  # a bare except
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(n) for n in node.elts))
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.Name):
        return {node.id}
    return set()


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(stmt, ast.Raise) and stmt.exc is None for stmt in handler.body)


def _suppresses_broadly(node: ast.withitem) -> bool:
    call = node.context_expr
    if not isinstance(call, ast.Call) or "suppress" not in _names(call.func):
        return False
    return any(_names(arg) & BROAD for arg in call.args)


def swallowing_handlers(source: str, filename: str) -> list[str]:
    """Broad handlers that neither re-raise nor follow a handler that lets SoftTimeLimitExceeded through,
    and ``contextlib.suppress(Exception)`` blocks."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.With | ast.AsyncWith):
            found += [f"{filename}:{node.lineno}" for item in node.items if _suppresses_broadly(item)]
        if not isinstance(node, ast.Try | ast.TryStar):
            continue
        time_limit_passes = False
        for handler in node.handlers:
            names = _names(handler.type)
            if "SoftTimeLimitExceeded" in names and _reraises(handler):
                time_limit_passes = True
            if names & BROAD and not time_limit_passes and not _reraises(handler):
                found.append(f"{filename}:{handler.lineno}")
    return found


def app_packages() -> list[Path]:
    """Every app package of the repository: the installed apps found here, and any folder with an apps.py."""
    installed = {Path(config.path).resolve() for config in apps.get_app_configs()}
    here = {path for path in installed if path.parent == ROOT}
    return sorted(here | {path.parent.resolve() for path in ROOT.glob("*/apps.py")})


def test_it_finds_a_swallowing_handler():
    assert swallowing_handlers("try:\n    x()\nexcept Exception:\n    pass\n", "f.py") == ["f.py:3"]
    assert swallowing_handlers("try:\n    x()\nexcept:\n    pass\n", "f.py") == ["f.py:3"]
    assert swallowing_handlers("try:\n    x()\nexcept (ValueError, Exception):\n    pass\n", "f.py") == ["f.py:3"]
    assert swallowing_handlers("with contextlib.suppress(Exception):\n    x()\n", "f.py") == ["f.py:1"]
    assert not swallowing_handlers("with contextlib.suppress(OSError):\n    x()\n", "f.py")
    assert not swallowing_handlers("try:\n    x()\nexcept BaseException:\n    undo()\n    raise\n", "f.py")
    assert not swallowing_handlers(
        "try:\n    x()\nexcept SoftTimeLimitExceeded:\n    raise\nexcept Exception:\n    pass\n", "f.py"
    )


def test_it_scans_every_app_of_the_repository():
    names = {path.name for path in app_packages()}
    assert {"core", "annotation", "evaluation", "artworks", "study", "prolific", "vivid_site"} <= names
    assert all(ROOT in path.parents for path in app_packages())  # never the virtualenv's packages


def test_it_never_swallows_a_soft_time_limit_in_any_app():
    found = []
    for package in app_packages():
        for path in sorted(package.rglob("*.py")):
            if "migrations" in path.parts:
                continue
            found += swallowing_handlers(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert found == [], "a broad except must let SoftTimeLimitExceeded through (re-raise it first): " + ", ".join(found)
