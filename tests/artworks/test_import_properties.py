"""Property tests of the artwork collection import: all or nothing, errors named."""

import io
import json
import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artworks.services.imports import ArtworkImportError, artworks_import
from tests.importing import PROPERTY_SETTINGS, assert_all_or_nothing, cell_text

pytestmark = pytest.mark.django_db


ARTWORK_FIELDS = ["id", "title", "artist", "date", "culture", "comment", "image", "elements", "questions"]
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | cell_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(cell_text, children, max_size=3),
    max_leaves=8,
)


@st.composite
def collection_sources(draw) -> tuple[str, bytes]:
    """A .zip with a data file of artworks of any shape, and maybe some images, or arbitrary bytes."""
    if draw(st.booleans()):
        return "c.zip", draw(st.binary(max_size=200))
    records = draw(
        st.lists(st.dictionaries(st.sampled_from(ARTWORK_FIELDS) | cell_text, json_value, max_size=6), max_size=3)
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        name = draw(st.sampled_from(["artworks.jsonl", "artworks.csv", "data.jsonl", "x/artworks.jsonl"]))
        archive.writestr(name, "\n".join(json.dumps(record) for record in records))
        for image in draw(st.lists(st.sampled_from(["a.png", "b.svg", "c.jpg", "../evil.png"]), max_size=2)):
            archive.writestr(image, draw(st.binary(max_size=60)))
    return "c.zip", buffer.getvalue()


@PROPERTY_SETTINGS
@given(source=collection_sources(), name=st.text(max_size=12))
def test_it_imports_an_artwork_collection_completely_or_not_at_all(db, source, name):
    filename, content = source
    assert_all_or_nothing(
        lambda: artworks_import(name=name, source=content, filename=filename),
        (ArtworkImportError,),
        lambda exc: str(exc),
    )
