from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from artworks.demo import demo_collection_ensure
from artworks.services.imports import ArtworkImportError


class Command(BaseCommand):
    help = (
        "Write the demo artworks (drawn by code) to VAR_DIR/demo-artworks/ and import them as the collection "
        "“Demo artworks” unless it exists. Prints the collection id last."
    )

    def handle(self, *args, **options):
        folder = Path(settings.VAR_DIR) / "demo-artworks"
        try:
            collection, created = demo_collection_ensure(folder=folder)
        except ArtworkImportError as exc:
            for error in exc.errors:
                self.stderr.write(error)
            raise CommandError("the demo collection could not be imported") from None
        if created:
            self.stdout.write(f"imported {collection.artworks.count()} demo artworks from {folder}")
        else:
            self.stdout.write(f"“{collection.name}” already exists ({collection.artworks.count()} artworks)")
        self.stdout.write(f"collection {collection.pk}: {collection.name}")
