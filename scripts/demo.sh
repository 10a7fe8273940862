#!/usr/bin/env bash
# Runs the web server and a Celery worker on the embedded broker; Ctrl-C stops both.
# The URL, the accounts and fresh participant links are printed last, once both are up.
# The port is VIVID_DEMO_PORT (`make demo PORT=8800`), 8000 by default. When the server cannot
# start, or either process stops, the script stops the other and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT=${VIVID_DEMO_PORT:-8000}
URL=http://127.0.0.1:$PORT/
WORKER_LOG=var/demo-worker.log
CHOOSE="choose another port with \`make demo PORT=8800\` (or VIVID_DEMO_PORT=8800 bash scripts/demo.sh)"

if ! [[ $PORT =~ ^[0-9]{1,5}$ ]] || ((10#$PORT < 1 || 10#$PORT > 65535)); then
  echo "VIVID_DEMO_PORT=$PORT is not a port number (1 to 65535): $CHOOSE." >&2
  exit 2
fi
# Before the seeding, so a taken port is said at once rather than after a minute of work.
if $PY scripts/service_up.py port "127.0.0.1:$PORT"; then
  echo "Port $PORT on 127.0.0.1 is taken (another \`make demo\`, or another program): stop it, or $CHOOSE." >&2
  exit 1
fi

$PY manage.py migrate --no-input -v 0
$PY manage.py seed_demo --no-summary
$PY manage.py seed_demo_study --no-links
$PY manage.py seed_demo_artworks

# Process groups of the worker (celery, its pool and tee) and of the server (runserver and its
# reloader's child): stopping a whole group leaves nothing behind. kill 0 would also hit
# whoever shares this script's group (make, a terminal's job, a test runner).
CHILD_GROUPS=()
# A group's leader is celery's main process (or runserver's reloader): it stops its pool (or the
# serving child) itself; a signal to every member would make celery report its pool as killed.
signal_leaders() {
  local group
  for group in "${CHILD_GROUPS[@]}"; do kill "-$1" "$group" 2>/dev/null || true; done
}
signal_all() {
  local group
  for group in "${CHILD_GROUPS[@]}"; do kill "-$1" -- "-$group" 2>/dev/null || true; done
}
groups_alive() {
  local group
  for group in "${CHILD_GROUPS[@]}"; do kill -0 -- "-$group" 2>/dev/null && return 0; done
  return 1
}
on_exit() {
  local status=$?
  trap - EXIT
  # A second Ctrl-C while the worker finishes a task kills both at once.
  trap 'signal_all KILL; exit 130' INT TERM
  signal_leaders TERM
  # Celery's warm shutdown lets a running task finish; one that takes longer is killed.
  for _ in {1..40}; do
    groups_alive || exit "$status"
    sleep 0.25
  done
  signal_all KILL
  exit "$status"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

: > "$WORKER_LOG"
# Job control only while starting the two: each gets its own process group. Off again at once,
# so the commands run in the foreground stay in this script's group and Ctrl-C reaches it.
set -m
# Unbuffered, so the worker's banner reaches the log (and the screen) as it is printed. The worker
# shares this machine's cores with the server: it yields them to the pages (README, Production).
WORKER_NICENESS="${WORKER_NICENESS:-10}" PYTHONUNBUFFERED=1 .venv/bin/celery -A vivid_site worker --loglevel=warning --concurrency=2 </dev/null |
  tee -a "$WORKER_LOG" &
WORKER=$(jobs -p %+)
CHILD_GROUPS+=("$WORKER")
$PY manage.py runserver "127.0.0.1:$PORT" </dev/null &
SERVER=$(jobs -p %+)
CHILD_GROUPS+=("$SERVER")
set +m

both_running() { kill -0 -- "-$SERVER" 2>/dev/null && kill -0 -- "-$WORKER" 2>/dev/null; }

# Seconds, then a command: true once the command succeeds, false when the time is up or either process died.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" 2>/dev/null; do
    if ((SECONDS >= deadline)) || ! both_running; then return 1; fi
    sleep 0.5
  done
}
if ! wait_for 90 $PY scripts/service_up.py http "$URL"; then
  echo "The server did not start on port $PORT: see its message above. If the port is taken, $CHOOSE." >&2
  exit 1
fi
if ! wait_for 60 grep -q '\[queues\]' "$WORKER_LOG"; then
  echo "The Celery worker did not start: see its messages above and in $WORKER_LOG." >&2
  exit 1
fi
# Fresh participants on every start: the links of a previous run may have finished already.
$PY manage.py demo_summary --base-url "$URL" --new-participants

# Until Ctrl-C, or until the server or the worker stops by itself.
while both_running; do sleep 1; done
echo "The server or the worker stopped: see the messages above." >&2
exit 1
