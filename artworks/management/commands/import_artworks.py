from collections import Counter

from django.core.management.base import BaseCommand, CommandError

from artworks.services.imports import ArtworkImportError, artworks_import


class Command(BaseCommand):
    help = (
        "Import an artwork collection: a folder or .zip holding artworks.csv or artworks.jsonl and the images, "
        "or the CSV/JSONL file itself (images relative to its folder). All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--collection", required=True, help="Name of the new collection.")

    def handle(self, *args, **options):
        try:
            collection = artworks_import(name=options["collection"], source=options["path"])
        except ArtworkImportError as exc:
            for error in exc.errors:
                self.stderr.write(error)
            raise CommandError(f"import aborted, nothing was written ({len(exc.errors)} error(s)).") from None
        cultures = Counter(collection.artworks.values_list("culture", flat=True))
        summary = ", ".join(f"{n} {culture}" for culture, n in sorted(cultures.items()))
        self.stdout.write(f"imported {sum(cultures.values())} artworks ({summary})")
        self.stdout.write(f"collection {collection.pk}: {collection.name}")
