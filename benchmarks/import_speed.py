"""Import speed: 2,500 rows into a fresh dataset, and a re-import of the same file (all duplicates).

Runs against a throwaway SQLite database (or DATABASE_URL when set) and prints
the figures. The issue's target is "well under 3 s" for 2,500 rows.

    .venv/bin/python benchmarks/import_speed.py [--rows 2500] [--repeat 3]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    var = tempfile.mkdtemp(prefix="vivid-bench-")
    os.environ.setdefault("VIVID_VAR_DIR", var)
    os.environ.setdefault("DJANGO_ENV", "test")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vivid_site.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Dataset
    from annotation.services import expression_import

    call_command("migrate", verbosity=0)
    lines = ["id,expression,explanation,kind,traits,theme,english_gloss"]
    for n in range(args.rows):
        lines.append(
            f"b{n},Câu tục ngữ thử nghiệm số {n} về lúa và nước,"
            f'Lời giải thích thứ {n} cho câu tục ngữ,proverb,"folk_knowledge,pragmatic",{n % 7 + 1},gloss {n}'
        )
    content = ("\n".join(lines) + "\n").encode()

    fresh, rerun = [], []
    for attempt in range(args.repeat):
        name = f"bench-{attempt}"
        started = time.perf_counter()
        report = expression_import(dataset_name=name, filename="bench.csv", content=content)
        fresh.append(time.perf_counter() - started)
        assert report.created == args.rows, report.summary
        started = time.perf_counter()
        report = expression_import(dataset_name=name, filename="bench.csv", content=content)
        rerun.append(time.perf_counter() - started)
        assert report.skipped_duplicates == args.rows
        Dataset.objects.filter(name=name).delete()

    print(f"database: {connection.vendor}")
    print(f"rows: {args.rows}, file size: {len(content) / 1024:.0f} KiB, repeats: {args.repeat}")
    print(
        f"fresh import:  median {statistics.median(fresh):.3f} s, max {max(fresh):.3f} s "
        f"({args.rows / statistics.median(fresh):,.0f} rows/s; target < 3 s: ratio {statistics.median(fresh) / 3:.2f})"
    )
    print(f"re-import (all duplicates): median {statistics.median(rerun):.3f} s")


if __name__ == "__main__":
    main()
