"""The smaller copies of artwork images, made at import so a phone downloads the one its screen needs."""

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils.translation import gettext as _

from core.files import ImageRefused, image_variants
from core.packages import storage_delete

from ..models import Artwork, Study


class ImageVariantsError(ValueError):
    """The copies of one artwork's image cannot be made; the message names the artwork."""


def artwork_image_variants_store(*, artwork: Artwork, content: bytes, written: list[str]) -> None:
    """Make and store the copies of ``content`` (the artwork's stored image) and set the artwork's
    image fields, without saving the row. Every file written is appended to ``written``, so the
    caller can remove them when its transaction fails. Raises ImageRefused."""
    width, height, variants = image_variants(content)
    stem = artwork.image.name.rsplit(".", 1)[0]
    stored = []
    for variant in variants:
        name = default_storage.save(f"{stem}.w{variant.width}.webp", ContentFile(variant.content))
        written.append(name)
        stored.append({"width": variant.width, "height": variant.height, "name": name})
    artwork.image_width, artwork.image_height, artwork.image_variants = width, height, stored


def study_image_variants_make(*, study: Study) -> int:
    """Make the copies for the study's artworks that have none (imported before copies were made, or
    written by a fixture); returns how many artworks got them. Raises ImageVariantsError naming the
    first artwork whose image cannot be read, after removing the files this call wrote for it."""
    made = 0
    for artwork in Artwork.objects.filter(study=study, image_width__isnull=True).order_by("position"):
        written: list[str] = []
        try:
            with artwork.image.open("rb") as file:
                content = file.read()
            artwork_image_variants_store(artwork=artwork, content=content, written=written)
        except (ImageRefused, OSError) as exc:
            storage_delete(written)
            raise ImageVariantsError(
                _('artwork "%(key)s", image: %(reason)s') % {"key": artwork.key, "reason": exc}
            ) from None
        Artwork.objects.filter(pk=artwork.pk, image_width__isnull=True).update(
            image_width=artwork.image_width, image_height=artwork.image_height, image_variants=artwork.image_variants
        )
        made += 1
    return made
