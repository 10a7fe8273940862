"""Property tests of the evaluation importers (human ratings): all or nothing, errors named."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.tables import ImportValidationError
from evaluation.services.scoring import ratings_import
from tests.importing import PROPERTY_SETTINGS, assert_all_or_nothing, table_files

from .factories import make_dataset, make_generation_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def generation(db):
    dataset = make_dataset(name="Ratings", csv="expression,explanation\nNuoc chay da mon,Kien tri\nA,B\n")
    return make_generation_run(dataset, reply="ok")


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
