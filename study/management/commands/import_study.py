from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from study.models import Description, Question, Term
from study.selectors.prep import study_terms_unmatched
from study.services.imports import StudyImportError, study_import


class Command(BaseCommand):
    help = "Import a study package (a folder or a .zip with study.json and images) as a draft study, all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("path", help="Folder or .zip holding study.json and the images.")

    def handle(self, *args, path, **options):
        source = Path(path)
        if not source.exists():
            raise CommandError(f"{path}: no such folder or file.")
        try:
            study = study_import(source=source, filename=source.name)
        except StudyImportError as exc:
            for error in exc.errors:
                self.stderr.write(error)
            raise CommandError(f"import aborted, nothing was written ({len(exc.errors)} error(s)).") from None
        artworks = study.artworks.all()
        self.stdout.write(f"study: {study.title}")
        self.stdout.write(
            f"artworks: {artworks.count()} ({artworks.filter(is_qc=True).count()} quality checks); "
            f"groups: {', '.join(study.groups)}"
        )
        self.stdout.write(f"questions: {Question.objects.filter(artwork__study=study).count()}")
        self.stdout.write(f"descriptions: {Description.objects.filter(artwork__study=study).count()}")
        self.stdout.write(f"terms: {Term.objects.filter(artwork__study=study).count()}")
        for term in study_terms_unmatched(study=study):
            self.stderr.write(
                f"warning: the confirmed term “{term.term}” of artwork “{term.artwork.key}” occurs in no description "
                "of it (in any plural, possessive or hyphenated form): participants will never see its Chinese label"
            )
        self.stdout.write("status: draft; preparation (sentence pairs, term lookup) queued")
        # Scripts read the slug from the last line.
        self.stdout.write(study.slug)
