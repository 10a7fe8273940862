#!/usr/bin/env bash
# Runs the web server and a Celery worker on the embedded broker; Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
$PY manage.py migrate --no-input -v 0
$PY manage.py seed_demo
$PY manage.py seed_demo_study
$PY manage.py seed_demo_artworks
trap 'trap - INT TERM EXIT; kill 0 2>/dev/null; wait' INT TERM EXIT
.venv/bin/celery -A vivid_site worker --loglevel=warning --concurrency=2 &
$PY manage.py runserver 127.0.0.1:8000 &
wait
