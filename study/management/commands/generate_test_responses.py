"""python manage.py generate_test_responses SLUG --n N [--seed S] [--qc-fail-rate F] [--workers W]"""

import os
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from study.selectors.participants import participant_status_counts
from study.selectors.studies import study_find
from study.services.simulation import SimulationError, synthetic_responses_generate


class Command(BaseCommand):
    help = "Send N synthetic participants through the study's real pages; their rows are marked as test data."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--n", type=int, required=True, help="Number of synthetic participants.")
        parser.add_argument("--seed", type=int, default=None, help="Random seed, for a repeatable set of answers.")
        parser.add_argument(
            "--qc-fail-rate", type=float, default=0.0, help="Share of participants who fail quality control (0-1)."
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=os.cpu_count() or 1,
            help="Processes sending participants at the same time (default: one per core).",
        )

    def handle(self, *args, slug, n, seed, qc_fail_rate, workers, **options):
        study = study_find(slug=slug)
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        started = time.perf_counter()
        with tqdm(total=n, desc="test responses", disable=options["verbosity"] < 1, file=self.stderr) as bar:
            try:
                outcomes = synthetic_responses_generate(
                    study=study, n=n, seed=seed, qc_fail_rate=qc_fail_rate, progress=bar.update, workers=workers
                )
            except SimulationError as exc:
                raise CommandError(str(exc)) from exc
        seconds = time.perf_counter() - started
        failures = [o for o in outcomes if o.errors]
        pids = [o.pid for o in outcomes]
        statuses = participant_status_counts(study=study, pids=pids)
        for status, count in sorted(statuses.items()):
            self.stdout.write(f"{status}: {count}")
        for outcome in failures:
            self.stderr.write(f"{outcome.pid}: {'; '.join(outcome.errors)}")
        if failures:
            raise CommandError(f"{len(failures)} of {n} synthetic participants did not finish.")
        # Before the last line, which scripts read as it always was.
        self.stdout.write(f"rate: {n / seconds:.1f} participants per second ({n} in {seconds:.1f} s)")
        self.stdout.write(f"{n} test responses stored for {slug}")
