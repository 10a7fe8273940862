"""One process that starts a study's Prolific sync chain, for tests/prolific/test_sync_chain.py.

``python -m tests.prolific.sync_start_process STUDY_ID GO_FILE``: prints "ready" once Django is set
up and connected, waits for GO_FILE to exist, then calls prolific_sync_start and prints "started"
or "refused". Nothing reaches a broker: the chain's first task is only recorded.
"""

import os
import sys
import time
from pathlib import Path


def main(study_id: int, go: Path) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vivid_site.settings")
    import django

    django.setup()
    from django.db import connection

    from prolific import tasks

    tasks.prolific_sync_task.apply_async = lambda *args, **kwargs: None
    connection.ensure_connection()
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.005)
    print("started" if tasks.prolific_sync_start(study_id) else "refused", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]))
