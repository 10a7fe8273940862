from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.http import json_text
from study.selectors.results import study_export_csv, study_results
from study.selectors.studies import study_find


class Command(BaseCommand):
    help = (
        "Print a study's results as JSON (counts, preference rates, position bias, QA accuracy, Kendall's tau) "
        "or its responses as long-format CSV (one row per answer)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--format", choices=["json", "csv"], default="json")
        parser.add_argument("--include-test", action="store_true", help="Count synthetic test participants too.")
        parser.add_argument(
            "--raw-pid", action="store_true", help="CSV: add the raw Prolific id (personal data) to each row."
        )
        parser.add_argument("--output", "-o", default="", help="Write to this file instead of standard output.")

    def handle(self, *args, **options):
        study = study_find(slug=options["slug"])
        if study is None:
            raise CommandError(f"no study with slug '{options['slug']}'")
        if options["format"] == "json":
            text = json_text(study_results(study=study, include_test=options["include_test"]))
        else:
            text = study_export_csv(study=study, include_test=options["include_test"], raw_pid=options["raw_pid"])
        if options["output"]:
            path = Path(options["output"])
            path.write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {path}")
        else:
            # No added newline: the text is already complete (the CSV must parse unchanged).
            self.stdout.write(text, ending="")
