"""Property tests of the evaluation importers (human ratings, artwork collections): all or nothing, errors named."""

import io
import json
import zipfile

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from annotation.models import Dataset
from annotation.services import expression_import
from annotation.services.imports import ImportValidationError
from evaluation.models import ModelConfig, PromptTemplate, Run, RunItem
from evaluation.services.artworks import ArtworkImportError, artworks_import
from evaluation.services.scoring import ratings_import
from tests.importing import PROPERTY_SETTINGS, assert_all_or_nothing, cell_text, table_files

pytestmark = pytest.mark.django_db


@pytest.fixture
def generation(db):
    expression_import(
        dataset_name="Ratings", filename="c.csv", content=b"expression,explanation\nNuoc chay da mon,Kien tri\nA,B\n"
    )
    dataset = Dataset.objects.get(name="Ratings")
    model = ModelConfig.objects.create(name="gen-model", provider="openai", model_id="g")
    run = Run.objects.create(
        kind="generation", model=model, prompt=PromptTemplate.objects.filter(kind="generation").first(),
        dataset=dataset, strategy="zero-shot", status="done", params={"seed": 0},
    )  # fmt: skip
    for expression in dataset.expressions.all():
        RunItem.objects.create(run=run, expression=expression, status="done", response="ok")
    return run


@PROPERTY_SETTINGS
@given(
    file=table_files(
        ["expression", "rater", "score", "accuracy", "completeness", "native_alignment"],
        {
            "expression": st.sampled_from(["Nuoc chay da mon", "A"]),
            "rater": st.sampled_from(["rater_1", "rater_2"]),
            "score": st.sampled_from(["0", "3", "5"]),
            "accuracy": st.sampled_from(["", "4"]),
        },
    )
)
@example(file=("f.csv", b"expression,rater,score\nNuoc chay da mon,rater_1,4\nA,rater_1,5\n"))
@example(file=("f.csv", b"expression,rater,score\nNuoc chay da mon,rater_1,4\nA,rater_1,9\n"))
def test_it_imports_ratings_completely_or_not_at_all(generation, file):
    filename, content = file
    assert_all_or_nothing(
        lambda: ratings_import(run=generation, filename=filename, content=content),
        (ImportValidationError,),
        lambda exc: "\n".join(str(error) for error in exc.report.errors),
    )


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
