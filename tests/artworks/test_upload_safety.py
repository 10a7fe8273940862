"""Artwork collections cannot carry script or bombs: SVGs become PNGs, images and downloads are served
sandboxed, zips are bounded."""

import io
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image

from artworks.models import ArtworkCollection, CollectionArtwork
from artworks.services.imports import ArtworkImportError, artworks_import
from core.files import UNTRUSTED_FILE_CSP
from tests.artworks.report_factories import make_pipeline_run
from tests.bombs import (
    ENTITY_JAVASCRIPT,
    NAMESPACED_SCRIPT,
    PNG_MAGIC,
    gigabyte_entry,
    lying_entry,
    stored,
    zip_entries,
)

pytestmark = pytest.mark.django_db

POLICY = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.VAR_DIR = tmp_path / "var"
    return Path(settings.MEDIA_ROOT)


def png(size=(8, 6)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def collection_zip(image_name: str, image, *, extra=None) -> bytes:
    """A one-artwork collection; ``image`` is bytes or a crafted zip entry."""
    rows = f"id,title,culture,image\nam-1,Eagle,american,{image_name}\n".encode()
    entry = image if isinstance(image, tuple) else stored(image_name, image)
    return zip_entries([stored("artworks.csv", rows), entry] + (extra or []))


def assert_nothing_written(media: Path):
    assert ArtworkCollection.objects.count() == CollectionArtwork.objects.count() == 0
    assert not [p for p in media.rglob("*") if p.is_file()] if media.exists() else True


@pytest.mark.parametrize("svg", [NAMESPACED_SCRIPT, ENTITY_JAVASCRIPT], ids=["namespaced-script", "entity-javascript"])
def test_it_stores_an_svg_carrying_script_as_a_png_and_serves_it_sandboxed(svg, researcher_client):
    collection = artworks_import(name="Svgs", source=collection_zip("img/e.svg", svg.encode()), filename="c.zip")

    artwork = collection.artworks.get()
    assert artwork.image.name.endswith("am-1.png")
    content = artwork.image.read()
    assert content.startswith(PNG_MAGIC) and b"script" not in content.lower()
    response = researcher_client.get(reverse("artworks:artwork_image", args=[collection.pk, artwork.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == POLICY == UNTRUSTED_FILE_CSP
    assert b"".join(response.streaming_content) == content


def test_it_refuses_an_unreadable_svg_naming_the_row_and_column(media):
    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Broken", source=collection_zip("img/e.svg", b"<svg><rect"), filename="c.zip")

    [error] = caught.value.errors
    assert error.startswith("row 2, column 'image': “img/e.svg”: not a readable SVG image (")
    assert_nothing_written(media)


def test_it_refuses_an_image_over_the_pixel_limit_naming_the_row_and_column(media, monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 30)

    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Big", source=collection_zip("img/e.png", png()), filename="c.zip")

    assert caught.value.errors == ["row 2, column 'image': “img/e.png”: the image has more pixels than the limit of 30"]
    assert_nothing_written(media)


def test_it_refuses_a_collection_that_inflates_to_a_gigabyte_on_the_page_and_command(
    media, researcher_client, tmp_path
):
    bomb = collection_zip("img/e.png", png(), extra=[gigabyte_entry("img/zeros.bin")])
    expected = "c.zip: the files in the zip add up to 1,073,741,"

    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Bomb", source=bomb, filename="c.zip")
    assert caught.value.errors[0].startswith(expected)

    page = researcher_client.post(
        reverse("artworks:collection_import"), {"name": "Bomb", "file": SimpleUploadedFile("c.zip", bomb)}
    )
    assert page.status_code == 400 and expected in page.content.decode()

    path = tmp_path / "c.zip"
    path.write_bytes(bomb)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_artworks", str(path), "--collection", "Bomb", stdout=io.StringIO(), stderr=err)
    assert expected in err.getvalue()
    assert_nothing_written(media)


def test_it_refuses_an_image_that_inflates_past_its_declared_size(media):
    liar = collection_zip("img/e.png", lying_entry("img/e.png"))

    with pytest.raises(ArtworkImportError) as caught:
        artworks_import(name="Liar", source=liar, filename="c.zip")

    assert caught.value.errors == [
        "row 2, column 'image': c.zip: “img/e.png” is damaged or holds more than the size its header declares"
    ]
    assert_nothing_written(media)


def test_it_serves_an_svg_stored_before_rasterising_as_a_download(researcher_client):
    collection = artworks_import(name="Old", source=collection_zip("img/e.png", png()), filename="c.zip")
    artwork = collection.artworks.get()
    artwork.image.save(
        f"{collection.pk}/am-1.svg", ContentFile(b'<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>')
    )

    response = researcher_client.get(reverse("artworks:artwork_image", args=[collection.pk, artwork.pk]))

    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == 'attachment; filename="am-1.svg"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == POLICY


def test_it_serves_downloads_as_sandboxed_attachments(researcher_client):
    run = make_pipeline_run(per_culture=1)

    package = researcher_client.post(reverse("artworks:export", args=[run.pk]))
    report = researcher_client.get(reverse("artworks:report", args=[run.pk]), {"format": "csv"})

    for response, content_type in ((package, "application/zip"), (report, "text/csv; charset=utf-8")):
        assert response.status_code == 200
        assert response["Content-Type"] == content_type
        assert response["Content-Disposition"].startswith("attachment; ")
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Security-Policy"] == POLICY
