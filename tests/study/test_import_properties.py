"""Property tests of the study package import: any package imports completely or is refused naming what is wrong."""

import io
import json
import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from study.services.imports import StudyImportError, study_import
from tests.importing import PROPERTY_SETTINGS, assert_all_or_nothing, cell_text

pytestmark = pytest.mark.django_db

STUDY_KEYS = [
    "slug",
    "title",
    "groups",
    "artworks",
    "artworks_per_participant",
    "qc_per_participant",
    "quota_per_group",
]
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | cell_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(cell_text, children, max_size=3),
    max_leaves=10,
)


@st.composite
def packages(draw) -> bytes:
    """A zip holding a study.json of any shape (sometimes not JSON, sometimes not UTF-8) and some files, or bytes."""
    if draw(st.integers(0, 4)) == 0:
        return draw(st.binary(max_size=200))
    document = draw(st.dictionaries(st.sampled_from(STUDY_KEYS) | cell_text, json_value, max_size=7))
    raw = json.dumps(document).encode(draw(st.sampled_from(["utf-8", "utf-16"])))
    if draw(st.integers(0, 5)) == 0:
        raw = draw(st.binary(max_size=80))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(draw(st.sampled_from(["study.json", "pkg/study.json", "other.json"])), raw)
        for image in draw(st.lists(st.sampled_from(["images/a.png", "images/b.svg", "a.jpg"]), max_size=2)):
            archive.writestr(image, draw(st.binary(max_size=60)))
    return buffer.getvalue()


@PROPERTY_SETTINGS
@given(package=packages())
def test_it_imports_a_study_package_completely_or_not_at_all(db, package):
    assert_all_or_nothing(
        lambda: study_import(source=package, filename="study.zip", start_prepare=False),
        (StudyImportError,),
        lambda exc: "\n".join(exc.errors),
    )
