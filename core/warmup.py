"""The statistics and table libraries, imported ahead of time by the long-running processes.

The modules that use them import them where they are used: together they cost about a second of
CPU, which every process that starts Django would otherwise pay (each ``manage.py`` command, a
test's subprocess), most of them never computing a kappa or reading a workbook. The web server and
the Celery worker do use them, on a researcher's first statistics page or the first round summary,
and import them at start instead: before gunicorn forks (``vivid_site/wsgi.py`` with
``preload_app``) and before the worker's pool forks (``vivid_site/celery.py``), once for every child.
"""

import importlib

LIBRARIES = (
    "pandas",
    "scipy.stats",
    "sklearn.metrics",
    "statsmodels.stats.inter_rater",
    "statsmodels.stats.proportion",
    "krippendorff",
)


def libraries_import() -> None:
    for name in LIBRARIES:
        importlib.import_module(name)
