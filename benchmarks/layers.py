"""Where a request's CPU goes, by layer: a cProfile of thread CPU time, each function's own time given
to the layer its file belongs to (sessions, auth, CSRF, the other middleware, URL routing, templates,
forms, the ORM, the database driver, the cache, Celery's enqueue, the app's own code, the rest of
Django), built-ins and the standard library charged to their callers, so the shares add up to the
whole. Shared by benchmarks/review_profile.py and ``survey_load.py --profile``."""

import cProfile
import pstats
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def profiler() -> cProfile.Profile:
    # Thread CPU, not the wall clock: a wait on the database or Redis is not a layer's cost.
    return cProfile.Profile(time.thread_time_ns, 1e-9)


# First match wins: more specific paths before the packages that contain them.
LAYERS = [
    ("sessions", ("django/contrib/sessions/",)),
    ("auth", ("django/contrib/auth/", "/axes/")),
    ("CSRF", ("django/middleware/csrf.py",)),
    (
        "other middleware",
        (
            "django/middleware/",
            "/csp/",
            "django_permissions_policy",
            "whitenoise",
            "django_htmx",
            "django/contrib/messages/",
        ),
    ),
    ("URL routing", ("django/urls/",)),
    ("i18n", ("django/utils/translation/", "/gettext.py")),
    ("templates", ("django/template/", "django/templatetags/", "template_partials", "/templatetags/")),
    ("forms", ("django/forms/",)),
    ("ORM", ("django/db/",)),
    ("database driver", ("psycopg",)),
    ("cache", ("django/core/cache/", "/redis/")),
    ("Celery enqueue", ("/celery/", "/kombu/", "/amqp/", "/vine/")),
    ("request handling", ("django/core/handlers/", "django/http/", "django/shortcuts.py", "django/views/")),
    ("rest of Django", ("/django/",)),
]


def layer_of(filename: str) -> str:
    if "site-packages" not in filename and filename.startswith(str(ROOT)) and "/.venv/" not in filename:
        return "app"
    for name, needles in LAYERS:
        if any(needle in filename for needle in needles):
            return name
    return "Python and the rest"


def layer_totals(entries: dict) -> dict[str, float]:
    """Own time per layer. A built-in or standard-library function has no layer of its own: its time
    goes to its callers' layers in proportion to what each caller spent in it."""
    shares: dict = {}

    def share_of(func, seen=frozenset()) -> dict[str, float]:
        if func in shares:
            return shares[func]
        filename = func[0]
        if filename not in ("~", "") and not is_generic(filename):
            return {layer_of(filename): 1.0}
        callers = entries.get(func, (0, 0, 0, 0, {}))[4]
        weights = {caller: values[2] for caller, values in callers.items() if caller not in seen}
        whole = sum(weights.values())
        result: dict[str, float] = {}
        for caller, weight in weights.items():
            for layer, part in share_of(caller, seen | {func}).items():
                result[layer] = result.get(layer, 0.0) + part * weight / whole
        shares[func] = result or {"Python and the rest": 1.0}
        return shares[func]

    totals: dict[str, float] = {}
    for func, (_cc, _nc, tottime, _ct, _callers) in entries.items():
        for layer, part in share_of(func).items():
            totals[layer] = totals.get(layer, 0.0) + part * tottime
    return totals


def is_generic(filename: str) -> bool:
    """The standard library, asgiref's thread-locals and Django's utilities (lazy objects, escaping,
    cached properties): shared plumbing, charged to its callers."""
    if "site-packages" not in filename and not filename.startswith(str(ROOT)):
        return True
    return "/asgiref/" in filename or ("django/utils/" in filename and "django/utils/translation/" not in filename)


def layers_print(profile: cProfile.Profile, *, cpu_ms: float) -> None:
    """Each layer's share of ``profile``, scaled to ``cpu_ms`` (the CPU a request costs unprofiled)."""
    by_layer = layer_totals(pstats.Stats(profile).stats)
    total = sum(by_layer.values()) or 1.0
    for layer, seconds in sorted(by_layer.items(), key=lambda kv: -kv[1]):
        share = seconds / total
        print(f"    {layer:<22} {share * 100:5.1f} %  {share * cpu_ms:6.2f} ms")
