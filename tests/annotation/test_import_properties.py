"""Property tests of the corpus importers: any file imports completely or is refused naming what is wrong."""

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from annotation.models import Dataset
from annotation.services import expression_import
from annotation.services.annotations_import import annotations_import
from annotation.services.imports import ImportValidationError
from annotation.services.rounds import suggestion_set_import
from tests.importing import PROPERTY_SETTINGS, assert_all_or_nothing, table_files

pytestmark = pytest.mark.django_db

SEED = "expression,explanation,kind,traits,theme\nNước chảy đá mòn,Kiên trì,proverb,pragmatic,virtues\n"


def _report_text(exc: ImportValidationError) -> str:
    # Every error is named by row and column, or concerns the whole file.
    assert exc.report.errors, "refused with no error"
    return "\n".join(str(error) for error in exc.report.errors)


def _django_text(exc: ValidationError) -> str:
    return "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())


@pytest.fixture
def dataset(db):
    expression_import(dataset_name="Seed", filename="seed.csv", content=SEED.encode())
    return Dataset.objects.get(name="Seed")


EXPRESSION_COLUMNS = ["id", "expression", "explanation", "kind", "traits", "theme", "source", "note"]


@PROPERTY_SETTINGS
@given(file=table_files(EXPRESSION_COLUMNS), dataset_name=st.text(max_size=20))
def test_it_imports_expressions_completely_or_not_at_all(dataset, file, dataset_name):
    filename, content = file
    assert_all_or_nothing(
        lambda: expression_import(dataset_name=dataset_name or "Seed", filename=filename, content=content),
        (ImportValidationError,),
        _report_text,
    )


@PROPERTY_SETTINGS
@given(file=table_files(["expression", "traits", "raw_output"]), name=st.text(max_size=20))
def test_it_imports_suggestions_completely_or_not_at_all(dataset, file, name):
    filename, content = file
    assert_all_or_nothing(
        lambda: suggestion_set_import(dataset=dataset, name=name, model_name="m", filename=filename, content=content),
        (ImportValidationError, ValidationError),
        lambda exc: _report_text(exc) if isinstance(exc, ImportValidationError) else _django_text(exc),
    )


@PROPERTY_SETTINGS
@given(file=table_files(["expression", "annotator", "traits", "theme", "note"]), round_name=st.text(max_size=20))
def test_it_imports_annotations_completely_or_not_at_all(dataset, annotator_a, file, round_name):
    filename, content = file
    assert_all_or_nothing(
        lambda: annotations_import(dataset=dataset, round_name=round_name, filename=filename, content=content),
        (ImportValidationError, ValidationError),
        lambda exc: _report_text(exc) if isinstance(exc, ImportValidationError) else _django_text(exc),
    )
