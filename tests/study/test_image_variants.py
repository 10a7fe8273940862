"""Smaller copies of artwork images, made at import: sizes, no metadata, bad and huge images, serving, srcset."""

import io
import json

import pytest
from django.core.files.base import ContentFile
from django.template.loader import render_to_string
from django.urls import reverse
from PIL import Image, ImageDraw

from core.files import UNTRUSTED_FILE_CSP, ImageRefused, image_variants
from study.models import Artwork, Study, StudyStatus
from study.services.images import ImageVariantsError, study_image_variants_make
from study.services.imports import StudyImportError, study_import

from .factories import make_study, package_dict, write_package
from .test_import import _media, media_files  # noqa: F401 - the isolated media folder fixture

GPS = 0x8825
ORIENTATION = 0x0112


def photo(size=(2400, 1600), *, mode="RGB", fmt="JPEG", **save) -> bytes:
    """A picture with edges and gradients (not a flat colour, which any encoder shrinks to nothing)."""
    image = Image.linear_gradient("L").resize(size).convert("RGB")
    draw = ImageDraw.Draw(image)
    for n in range(0, size[0], 97):
        draw.line((n, 0, size[0] - n, size[1]), fill=(200, 30 + n % 200, 60), width=5)
    draw.ellipse((size[0] // 4, size[1] // 4, size[0] // 2, size[1] // 2), fill=(20, 120, 200))
    if mode == "I;16":
        # Sixteen bits used in full, as a scanner writes them (not 8-bit values in a 16-bit box).
        image = image.convert("I").point(lambda value: value * 256).convert("I;16")
    elif mode in ("RGBA", "LA"):
        image = image.convert(mode)
        image.putalpha(Image.linear_gradient("L").resize(size))  # see-through at the top
    elif mode != "RGB":
        image = image.convert(mode)
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **save)
    return buffer.getvalue()


def camera_jpeg(size=(2400, 1600)) -> bytes:
    """A phone photograph: turned by its EXIF orientation (6: 90° clockwise), with a GPS position."""
    exif = Image.Exif()
    exif[ORIENTATION] = 6
    exif[0x010F] = "PhoneMaker"
    exif.get_ifd(GPS)[2] = (51.0, 30.0, 0.0)
    return photo(size, exif=exif.tobytes())


def opened(content: bytes) -> Image.Image:
    return Image.open(io.BytesIO(content))


# --- Making the copies ---------------------------------------------------------------------------


def test_it_makes_a_webp_copy_for_each_width_narrower_than_the_original():
    width, height, variants = image_variants(photo((2400, 1600)))

    assert (width, height) == (2400, 1600)
    assert [(v.width, v.height) for v in variants] == [(480, 320), (960, 640), (1600, 1067)]
    for variant in variants:
        image = opened(variant.content)
        assert image.format == "WEBP" and image.size == (variant.width, variant.height)
    assert len(variants[0].content) < len(variants[-1].content)


def test_it_turns_a_photograph_as_its_exif_says_and_drops_its_metadata():
    width, height, variants = image_variants(camera_jpeg((2400, 1600)))

    # Orientation 6: the browser shows the original upright, 1600 wide and 2400 high; so are the copies.
    assert (width, height) == (1600, 2400)
    assert [(v.width, v.height) for v in variants] == [(480, 720), (960, 1440)]
    for variant in variants:
        image = opened(variant.content)
        assert not image.getexif() and "exif" not in image.info and "xmp" not in image.info
        assert b"PhoneMaker" not in variant.content


@pytest.mark.parametrize(
    ("mode", "fmt", "alpha"),
    [("CMYK", "JPEG", False), ("P", "GIF", False), ("RGBA", "PNG", True), ("LA", "PNG", True), ("I;16", "PNG", False)],
)
def test_it_copies_every_kind_of_image_a_package_may_hold(mode, fmt, alpha):
    _w, _h, variants = image_variants(photo((1000, 700), mode=mode, fmt=fmt))

    assert [v.width for v in variants] == [480, 960]
    image = opened(variants[0].content)
    assert image.mode == ("RGBA" if alpha else "RGB")
    # Not a blank: the copy still holds the drawing's light and dark parts.
    low, high = image.convert("L").getextrema()
    assert high - low > 100


def test_it_copies_a_large_photograph_decoded_at_a_reduced_scale_at_full_copy_size():
    # 6,000 x 4,000 (a 24-megapixel camera): decoded at half size, 3,000 px, still wider than every copy.
    width, height, variants = image_variants(camera_jpeg((6000, 4000)))

    assert (width, height) == (4000, 6000)
    assert [(v.width, v.height) for v in variants] == [(480, 720), (960, 1440), (1600, 2400)]
    low, high = opened(variants[-1].content).convert("L").getextrema()
    assert high - low > 100


def test_it_makes_no_copy_of_an_image_no_wider_than_the_smallest_width():
    assert image_variants(photo((480, 900))) == (480, 900, [])


def test_it_leaves_out_a_copy_taller_than_webp_can_hold():
    # 1,700 x 20,000 is under Pillow's pixel limit; a 1,600-wide copy would be 18,824 high, over WebP's 16,383.
    width, height, variants = image_variants(photo((1700, 20000), fmt="PNG"))

    assert (width, height) == (1700, 20000)
    assert [(v.width, v.height) for v in variants] == [(480, 5647), (960, 11294)]


def test_it_refuses_an_image_over_the_pixel_limit(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000_000)

    with pytest.raises(ImageRefused, match="more pixels than the limit of 1,000,000"):
        image_variants(photo((1200, 900)))


def test_it_refuses_a_truncated_image():
    with pytest.raises(ImageRefused, match=r"the image cannot be decoded \(image file is truncated"):
        image_variants(photo((1200, 900))[:5000])


# --- At import -----------------------------------------------------------------------------------


def package_with_photo(tmp_path, *, slug="photos", content: bytes | None = None, name="images/am1.jpg"):
    package = package_dict(slug=slug)
    folder = write_package(tmp_path / "pkg", package)
    next(a for a in package["artworks"] if a["id"] == "am1")["image"] = name
    (folder / name).write_bytes(content if content is not None else camera_jpeg())
    (folder / "study.json").write_text(json.dumps(package), encoding="utf-8")
    return folder


@pytest.mark.django_db
def test_it_stores_the_copies_of_a_package_image_at_import(tmp_path, settings):
    study = study_import(source=package_with_photo(tmp_path), start_prepare=False)

    artwork = study.artworks.get(key="am1")
    assert (artwork.image_width, artwork.image_height) == (1600, 2400)
    assert [(v["width"], v["height"]) for v in artwork.image_variants] == [(480, 720), (960, 1440)]
    names = {p.relative_to(settings.MEDIA_ROOT).as_posix() for p in media_files(settings)}
    assert {v["name"] for v in artwork.image_variants} <= names
    assert "study/photos/am1.w480.webp" in names
    # The factory's 64 x 48 images need no copy, and keep their size.
    small = study.artworks.get(key="am2")
    assert (small.image_width, small.image_height, small.image_variants) == (64, 48, [])


@pytest.mark.django_db
def test_it_refuses_an_image_whose_pixels_cannot_be_read_naming_the_artwork_and_writes_nothing(tmp_path, settings):
    # A JPEG cut short still passes the check of its header at validation; its copies cannot be made.
    folder = package_with_photo(tmp_path, content=photo((1200, 900))[:6000])

    with pytest.raises(StudyImportError) as caught:
        study_import(source=folder, start_prepare=False)

    (error,) = caught.value.errors
    assert error.startswith(
        'artwork "am1", image: “images/am1.jpg”: the image cannot be decoded (image file is truncated'
    )
    assert Study.objects.count() == Artwork.objects.count() == 0
    assert media_files(settings) == []


# --- Serving and the page ------------------------------------------------------------------------


@pytest.fixture
def photo_study(tmp_path):
    study = study_import(source=package_with_photo(tmp_path, slug="served-photos"), start_prepare=False)
    Study.objects.filter(pk=study.pk).update(status=StudyStatus.LIVE)
    return study


@pytest.mark.django_db
def test_it_serves_each_copy_by_its_width_as_a_sandboxed_webp(client, photo_study):
    url = reverse("study:image", args=[photo_study.slug, "am1"])

    small = client.get(url, {"w": "480"})
    original = client.get(url)

    assert small.status_code == 200
    assert small["Content-Type"] == "image/webp"
    assert small["Content-Security-Policy"] == UNTRUSTED_FILE_CSP
    assert small["X-Content-Type-Options"] == "nosniff"
    assert opened(b"".join(small.streaming_content)).size == (480, 720)
    assert original["Content-Type"] == "image/jpeg"
    assert opened(b"".join(original.streaming_content)).size == (2400, 1600)  # as stored; EXIF turns it


@pytest.mark.django_db
@pytest.mark.parametrize("width", ["123", "480w", "../am2", "", "1600"])
def test_it_serves_the_original_for_a_width_it_has_no_copy_of(client, photo_study, width):
    response = client.get(reverse("study:image", args=[photo_study.slug, "am1"]), {"w": width})

    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"


@pytest.mark.django_db
def test_it_still_serves_an_artwork_stored_before_copies_were_made(client):
    study = make_study(package_dict(slug="old-study"), status=StudyStatus.LIVE)

    response = client.get(reverse("study:image", args=[study.slug, "am1"]), {"w": "480"})

    assert response.status_code == 200 and response["Content-Type"] == "image/png"


@pytest.mark.django_db
def test_it_makes_the_copies_of_a_study_imported_before_them(tmp_path):
    study = make_study(package_dict(slug="backfill"), status=StudyStatus.LIVE)
    artwork = study.artworks.get(key="am1")
    artwork.image.save("backfill-am1-big.jpg", ContentFile(photo((1000, 500))))

    assert study_image_variants_make(study=study) == study.artworks.count()
    artwork.refresh_from_db()
    assert [v["width"] for v in artwork.image_variants] == [480, 960]
    assert study_image_variants_make(study=study) == 0  # once


@pytest.mark.django_db
def test_it_names_the_artwork_whose_image_cannot_be_copied(tmp_path):
    study = make_study(package_dict(slug="broken-old"), status=StudyStatus.LIVE)
    study.artworks.get(key="am3").image.save("broken-old-am3.jpg", ContentFile(photo((1000, 500))[:3000]))

    with pytest.raises(ImageVariantsError, match=r'^artwork "am3", image: the image cannot be decoded'):
        study_image_variants_make(study=study)


@pytest.mark.django_db
def test_it_gives_the_artwork_a_srcset_of_its_copies_and_its_size(photo_study):
    artwork = photo_study.artworks.get(key="am1")
    html = render_to_string(
        "study/participant/_artwork.html", {"study": photo_study, "artwork": artwork, "artwork_title": "Cranes"}
    )
    url = reverse("study:image", args=[photo_study.slug, "am1"])

    assert (
        f'srcset="{url}?w=480 480w, {url}?w=960 960w, {url} 1600w" '
        'sizes="(max-width: 768px) calc(100vw - 2rem), 40rem" width="1600" height="2400"'
    ) in html
    # The enlarge link is a plain link to the full-size image: it works without script.
    assert f'<a href="{url}" class="artwork-enlarge" data-enlarge' in html


@pytest.mark.django_db
def test_it_gives_an_artwork_without_copies_its_image_alone(db):
    study = make_study(package_dict(slug="plain-img"), status=StudyStatus.LIVE)
    html = render_to_string(
        "study/participant/_artwork.html",
        {"study": study, "artwork": study.artworks.get(key="am1"), "artwork_title": "Cranes"},
    )

    assert "srcset" not in html and "width=" not in html
    assert f'<img src="{reverse("study:image", args=[study.slug, "am1"])}" alt="Artwork: Cranes">' in html


@pytest.mark.django_db
def test_it_deletes_the_copies_with_a_draft_study(tmp_path, settings, django_capture_on_commit_callbacks):
    from study.services.studies import study_delete

    study = study_import(source=package_with_photo(tmp_path, slug="doomed-photos"), start_prepare=False)
    assert any(path.suffix == ".webp" for path in media_files(settings))

    with django_capture_on_commit_callbacks(execute=True):
        study_delete(study=study)

    assert media_files(settings) == []


@pytest.mark.django_db
def test_the_command_fills_in_the_copies_of_older_studies_and_names_a_broken_image():
    from django.core.management import CommandError, call_command

    study = make_study(package_dict(slug="older"), status=StudyStatus.LIVE)
    study.artworks.filter(key="am1").get().image.save("older-am1.jpg", ContentFile(photo((1000, 500))))
    out = io.StringIO()

    call_command("study_image_variants", "older", stdout=out)
    call_command("study_image_variants", "--all", stdout=out)

    assert (
        out.getvalue() == f"older: {study.artworks.count()} artwork image(s) copied\nolder: 0 artwork image(s) copied\n"
    )
    assert [v["width"] for v in study.artworks.get(key="am1").image_variants] == [480, 960]
    broken = make_study(package_dict(slug="broken"), status=StudyStatus.LIVE)
    broken.artworks.get(key="cn1").image.save("broken-cn1.jpg", ContentFile(photo((1000, 500))[:2500]))
    with pytest.raises(CommandError, match=r'^broken: artwork "cn1", image: the image cannot be decoded'):
        call_command("study_image_variants", "broken", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no study with slug nope"):
        call_command("study_image_variants", "older", "nope")
