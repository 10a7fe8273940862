#!/usr/bin/env bash
# Runs the web server and a Celery worker on the embedded broker; Ctrl-C stops both.
# The URL, the accounts and the participant links are printed last, once both are up.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT=${VIVID_DEMO_PORT:-8000}
URL=http://127.0.0.1:$PORT/
WORKER_LOG=var/demo-worker.log
$PY manage.py migrate --no-input -v 0
$PY manage.py seed_demo --no-summary
$PY manage.py seed_demo_study --no-links
$PY manage.py seed_demo_artworks
trap 'trap - INT TERM EXIT; kill 0 2>/dev/null; wait' INT TERM EXIT
: > "$WORKER_LOG"
# Unbuffered, so the worker's banner reaches the log (and the screen) as it is printed.
PYTHONUNBUFFERED=1 .venv/bin/celery -A vivid_site worker --loglevel=warning --concurrency=2 | tee -a "$WORKER_LOG" &
$PY manage.py runserver "127.0.0.1:$PORT" &
SERVER=$!

# Seconds, then a command: true once the command succeeds, false when the time is up or the server died.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" 2>/dev/null; do
    if ((SECONDS >= deadline)) || ! kill -0 "$SERVER" 2>/dev/null; then return 1; fi
    sleep 0.5
  done
}
if wait_for 90 $PY scripts/service_up.py http "$URL" && wait_for 60 grep -q '\[queues\]' "$WORKER_LOG"; then
  $PY manage.py demo_summary --base-url "$URL"
else
  echo "The server or the worker did not start: see the messages above (is port $PORT taken?)." >&2
fi
wait
