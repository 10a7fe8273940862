"""Study packages cannot carry script or bombs: SVGs become PNGs, images are served sandboxed, zips are bounded."""

import io
import json
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image
from rest_framework.test import APIClient

from core.files import RASTER_MAX_SIDE, UNTRUSTED_FILE_CSP
from study.models import Artwork, Description, Question, Study, StudyStatus
from study.services.imports import StudyImportError, study_import
from tests.bombs import (
    ENTITY_JAVASCRIPT,
    NAMESPACED_SCRIPT,
    PNG_MAGIC,
    gigabyte_entry,
    lying_entry,
    stored,
    zip_entries,
)
from tests.loopback import LoopbackHandler, LoopbackServer, serve_in_thread, stop_serving

from .factories import make_study, package_dict, write_package
from .test_import import _media, media_files  # noqa: F401 - the isolated media folder fixture

pytestmark = pytest.mark.django_db


def assert_nothing_written(settings):
    assert (
        Study.objects.count() == Artwork.objects.count() == Question.objects.count() == Description.objects.count() == 0
    )
    assert media_files(settings) == []


def package_with_svg(tmp_path, svg: str, *, slug: str = "svg-study") -> Path:
    package = package_dict(slug=slug)
    folder = write_package(tmp_path / "pkg", package)
    artwork = next(a for a in package["artworks"] if a["id"] == "am2")
    artwork["image"] = "images/am2.svg"
    (folder / "images/am2.svg").write_text(svg, encoding="utf-8")
    (folder / "study.json").write_text(json.dumps(package), encoding="utf-8")
    return folder


def package_zip(tmp_path, *, replace: dict | None = None, extra: list | None = None) -> bytes:
    """The factory package as a zip; ``replace`` swaps entries by name for crafted ones."""
    folder = write_package(tmp_path / "zipped", package_dict(slug="zipped"))
    replace = replace or {}
    entries = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            name = path.relative_to(folder).as_posix()
            entries.append(replace.get(name) or stored(name, path.read_bytes()))
    return zip_entries(entries + (extra or []))


# --- SVGs become PNGs ----------------------------------------------------------------------------


@pytest.mark.parametrize("svg", [NAMESPACED_SCRIPT, ENTITY_JAVASCRIPT], ids=["namespaced-script", "entity-javascript"])
def test_it_stores_an_svg_carrying_script_as_a_png_and_serves_it_as_one(tmp_path, svg, researcher_client):
    study = study_import(source=package_with_svg(tmp_path, svg))

    artwork = study.artworks.get(key="am2")
    assert artwork.image.name.endswith("am2.png")
    stored_bytes = artwork.image.read()
    assert stored_bytes.startswith(PNG_MAGIC) and b"script" not in stored_bytes.lower()
    with Image.open(io.BytesIO(stored_bytes)) as image:
        assert image.size == (40, 30)
    response = researcher_client.get(reverse("study:image", args=[study.slug, "am2"]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == stored_bytes


class _Recorder(LoopbackHandler):
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        type(self).requests.append(self.path)
        red = io.BytesIO()
        Image.new("RGB", (40, 30), (255, 0, 0)).save(red, format="PNG")
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()
        self.wfile.write(red.getvalue())


@pytest.fixture
def loopback_server():
    _Recorder.requests = []
    server = LoopbackServer(("127.0.0.1", 0), _Recorder)
    thread = serve_in_thread(server, name="svg-reference-recorder")
    yield f"http://127.0.0.1:{server.server_address[1]}", _Recorder.requests
    stop_serving(server, thread)


def test_it_fetches_nothing_an_svg_points_at(tmp_path, loopback_server):
    base, requests = loopback_server
    secret = tmp_path / "secret.png"
    Image.new("RGB", (40, 30), (255, 0, 0)).save(secret, format="PNG")
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="30">'
        f'<style>@import url("{base}/style.css");</style>'
        f'<image href="{base}/red.png" width="40" height="30"/>'
        f'<image xlink:href="file://{secret}" width="40" height="30"/>'
        '<image href="file:///etc/passwd" width="40" height="30"/>'
        f'<use href="{base}/other.svg#shape"/></svg>'
    )

    study = study_import(source=package_with_svg(tmp_path, svg))

    assert requests == []
    with Image.open(study.artworks.get(key="am2").image) as image:
        colours = {colour for _, colour in image.convert("RGBA").getcolors(40 * 30)}
    # A fetched red image would show as red pixels (cairo blends them, so not exactly 255, 0, 0).
    assert not [c for c in colours if c[3] and c[0] > 200 and c[1] < 60 and c[2] < 60]


def test_it_draws_a_huge_svg_no_larger_than_the_bound(tmp_path):
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="200000" height="100000"><rect width="10" height="10"/></svg>'

    study = study_import(source=package_with_svg(tmp_path, svg))

    with Image.open(study.artworks.get(key="am2").image) as image:
        assert image.size == (RASTER_MAX_SIDE, RASTER_MAX_SIDE // 2)


@pytest.mark.parametrize(
    "svg, reason",
    [
        ('<svg xmlns="http://www.w3.org/2000/svg"><rect', "not a readable SVG image ("),
        (
            '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
            '<svg xmlns="http://www.w3.org/2000/svg"><text>&b;</text></svg>',
            "not a readable SVG image (",
        ),
        ('<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0"/>', "the SVG has no drawable size"),
    ],
    ids=["broken", "entities", "no-size"],
)
def test_it_refuses_an_unusable_svg_naming_the_artwork_and_field(tmp_path, settings, svg, reason):
    with pytest.raises(StudyImportError) as caught:
        study_import(source=package_with_svg(tmp_path, svg))

    [error] = caught.value.errors
    assert error.startswith(f'artwork "am2", image: “images/am2.svg”: {reason}')
    assert_nothing_written(settings)


def test_it_refuses_an_image_over_the_pixel_limit_where_pillow_only_warns(tmp_path, settings, monkeypatch):
    # 64 x 48 = 3,072 pixels: over this limit, under twice it, where Pillow itself only warns.
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 2_000)
    folder = write_package(tmp_path / "pkg", package_dict(slug="big-pixels"))

    with pytest.raises(StudyImportError) as caught:
        study_import(source=folder)

    assert caught.value.errors[0] == (
        'artwork "am1", image: “images/am1.png”: the image has more pixels than the limit of 2,000'
    )
    assert_nothing_written(settings)


# --- Serving -------------------------------------------------------------------------------------


def test_it_serves_an_artwork_image_with_its_type_nosniff_and_a_sandbox_policy(client):
    study = make_study(package_dict(slug="served"), status=StudyStatus.LIVE)

    response = client.get(reverse("study:image", args=[study.slug, "am1"]))

    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == (
        "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"
    )
    assert response["Content-Security-Policy"] == UNTRUSTED_FILE_CSP
    assert response["Content-Disposition"].startswith("inline")


def test_it_serves_an_svg_stored_before_rasterising_as_a_download(client):
    study = make_study(package_dict(slug="old-svg"), status=StudyStatus.LIVE)
    artwork = study.artworks.get(key="am1")
    artwork.image.save(
        "old-svg/am1.svg", ContentFile(b'<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>')
    )

    response = client.get(reverse("study:image", args=[study.slug, "am1"]))

    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == 'attachment; filename="am1.svg"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == UNTRUSTED_FILE_CSP


# --- Zip bombs in a package ----------------------------------------------------------------------


def test_it_refuses_a_package_that_inflates_to_a_gigabyte_on_the_page_api_and_command(
    tmp_path, settings, researcher_client, researcher
):
    bomb = package_zip(tmp_path, extra=[gigabyte_entry("images/zeros.bin")])
    expected = "study.zip: the files in the zip add up to "

    with pytest.raises(StudyImportError) as caught:
        study_import(source=bomb, filename="study.zip")
    assert caught.value.errors[0].startswith(expected)

    page = researcher_client.post(reverse("study:import"), {"package": SimpleUploadedFile("study.zip", bomb)})
    assert page.status_code == 400 and expected in page.content.decode()

    api = APIClient()
    api.force_authenticate(researcher)
    answer = api.post(
        reverse("study_api:study-import"), {"package": SimpleUploadedFile("study.zip", bomb)}, format="multipart"
    )
    assert answer.status_code == 400 and answer.json()["errors"][0].startswith(expected)

    path = tmp_path / "study.zip"
    path.write_bytes(bomb)
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_study", str(path), stdout=io.StringIO(), stderr=err)
    assert err.getvalue().startswith(expected)
    assert_nothing_written(settings)


def test_it_refuses_a_package_image_that_inflates_past_its_declared_size(tmp_path, settings):
    liar = package_zip(tmp_path, replace={"images/am1.png": lying_entry("images/am1.png")})

    with pytest.raises(StudyImportError) as caught:
        study_import(source=liar, filename="study.zip")

    assert caught.value.errors == [
        'artwork "am1", image: study.zip: “images/am1.png” is damaged or holds more than the size its header declares'
    ]
    assert_nothing_written(settings)
