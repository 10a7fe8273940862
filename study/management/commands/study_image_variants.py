from django.core.management.base import BaseCommand, CommandError

from study.models import Study
from study.services.images import ImageVariantsError, study_image_variants_make


class Command(BaseCommand):
    help = (
        "Make the smaller copies (480, 960, 1600 px wide) of the artwork images of studies imported before "
        "imports made them, so phones download the copy their screen needs. Artworks that have them are left alone."
    )

    def add_arguments(self, parser):
        parser.add_argument("slugs", nargs="*", help="Studies to fill in; none with --all.")
        parser.add_argument("--all", action="store_true", help="Every study.")

    def handle(self, *args, slugs, **options):
        if bool(slugs) == options["all"]:
            raise CommandError("name one or more studies, or pass --all")
        studies = Study.objects.order_by("slug") if options["all"] else Study.objects.filter(slug__in=slugs)
        missing = set(slugs) - set(studies.values_list("slug", flat=True))
        if missing:
            raise CommandError(f"no study with slug {', '.join(sorted(missing))}")
        for study in studies:
            try:
                made = study_image_variants_make(study=study)
            except ImageVariantsError as exc:
                raise CommandError(f"{study.slug}: {exc}") from None
            self.stdout.write(f"{study.slug}: {made} artwork image(s) copied")
