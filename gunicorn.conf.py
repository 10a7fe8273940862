"""gunicorn settings for production, read by ``gunicorn vivid_site.wsgi`` run from the repository root.

gunicorn loads ``./gunicorn.conf.py`` by itself; ``-c gunicorn.conf.py`` says so explicitly.
The load benchmarks (``benchmarks/review_load.py``, ``benchmarks/survey_load.py``) serve the app
with this file, so what they measure is what the README documents for deployment. Each value can
be overridden on the command line (``--workers 9``) or through the environment variables below.

Sized for a 2-core machine: the app's requests are CPU-bound Python with short database waits,
so a few processes (two per core, plus one, to cover the waits) keep the cores busy.

Sync workers, one request at a time each, not threaded ones: a gthread worker accepts connections
however busy it is, and a client that keeps its connection open sends every request to the process
that accepted it. Under the survey benchmark's 50 participants one gthread process of five served
all of them (one core busy, the other mostly idle: 84-98 pages/s at 10.4-11.7 ms of CPU a page);
sync workers take a connection only when free, the kernel's queue feeds whichever is, and in the
same hour they served 167 pages/s at 8.2 ms a page (README, "Sync workers"). A sync worker closes
the connection after each answer; in production the proxy in front (which terminates HTTPS) keeps
the browser's connection, so only the loopback hop to gunicorn is opened per request.
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "sync")
# More than 1 makes gunicorn use gthread workers (see above).
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
# Import the app once in the master (vivid_site/wsgi.py loads every view), then fork: faster
# start-up, shared memory pages, and an import error stops the server instead of each worker.
preload_app = True
# For gthread workers only (sync workers close each connection after its answer).
keepalive = 10
timeout = 120
graceful_timeout = 30
# Recycle a worker now and then (jittered, so they never restart together): bounds any slow leak.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "10000"))
max_requests_jitter = max_requests // 10
# The proxy in front logs requests; gunicorn logs what goes wrong.
accesslog = None
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "warning")
