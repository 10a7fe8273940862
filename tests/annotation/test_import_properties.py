"""Property tests of the corpus importers: any file imports completely or is refused naming what is wrong."""

import pytest
from django.core.exceptions import ValidationError
from hypothesis import example, given
from hypothesis import strategies as st

from annotation.services import expression_import
from annotation.services.imports import annotations_import, suggestion_set_import
from core.tables import ImportValidationError
from tests.importing import PROPERTY_SETTINGS, assert_all_or_nothing, table_files

from .factories import make_dataset

pytestmark = pytest.mark.django_db

SEED = "expression,explanation,kind,traits,theme\nNước chảy đá mòn,Kiên trì,proverb,pragmatic,virtues\n"


def _report_text(exc: ImportValidationError) -> str:
    # Every error is named by row and column, or concerns the whole file.
    assert exc.report.errors, "refused with no error"
    return "\n".join(str(error) for error in exc.report.errors)


def _django_text(exc: ValidationError) -> str:
    return "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())


@pytest.fixture
def seed_dataset(db):
    """One labelled expression the generated files may name."""
    return make_dataset(name="Seed", csv=SEED, filename="seed.csv")


EXPRESSION_COLUMNS = ["id", "expression", "explanation", "kind", "traits", "theme", "source", "note"]
# Acceptable cells, so some files import and some fail after good rows (the partial-write risk).
SEEDED = st.sampled_from(["Nước chảy đá mòn"])
TRAITS = st.sampled_from(["", "pragmatic"])
THEMES = st.sampled_from(["", "virtues"])
VALID_EXPRESSION = {
    "id": st.sampled_from(["", "7", "8"]),
    "expression": st.sampled_from(["Có công mài sắt", "Tre già măng mọc", "Ăn quả nhớ kẻ trồng cây"]),
    "explanation": st.sampled_from(["Kiên trì", "Biết ơn"]),
    "kind": st.sampled_from(["", "idiom", "proverb"]),
    "traits": TRAITS,
    "theme": THEMES,
    "source": st.sampled_from(["", "Dân gian"]),
    "note": st.sampled_from(["", "ghi chú"]),
}


@PROPERTY_SETTINGS
@given(file=table_files(EXPRESSION_COLUMNS, VALID_EXPRESSION), dataset_name=st.text(max_size=20))
# Always one file that imports, and one that fails after a good row.
@example(
    file=("f.csv", "expression,explanation,traits,theme\nCó công mài sắt,Kiên trì,pragmatic,virtues\n".encode()),
    dataset_name="Mới",
)
@example(file=("f.csv", "expression,explanation\nCó công mài sắt,Kiên trì\n,Thiếu\n".encode()), dataset_name="Mới")
def test_it_imports_expressions_completely_or_not_at_all(seed_dataset, file, dataset_name):
    filename, content = file
    assert_all_or_nothing(
        lambda: expression_import(dataset_name=dataset_name or "Seed", filename=filename, content=content),
        (ImportValidationError,),
        _report_text,
    )


@PROPERTY_SETTINGS
@given(
    file=table_files(["expression", "traits", "raw_output"], {"expression": SEEDED, "traits": TRAITS}),
    name=st.sampled_from(["Gợi ý"]) | st.text(max_size=20),
)
@example(file=("f.csv", "expression,traits,raw_output\nNước chảy đá mòn,pragmatic,{}\n".encode()), name="Gợi ý")
@example(file=("f.csv", "expression,traits\nNước chảy đá mòn,pragmatic\nKhông có,pragmatic\n".encode()), name="Gợi ý")
def test_it_imports_suggestions_completely_or_not_at_all(seed_dataset, file, name):
    filename, content = file
    assert_all_or_nothing(
        lambda: suggestion_set_import(
            dataset=seed_dataset, name=name, model_name="m", filename=filename, content=content
        ),
        (ImportValidationError, ValidationError),
        lambda exc: _report_text(exc) if isinstance(exc, ImportValidationError) else _django_text(exc),
    )


@PROPERTY_SETTINGS
@given(
    file=table_files(
        ["expression", "annotator", "traits", "theme", "note"],
        {
            "expression": SEEDED,
            "annotator": st.sampled_from(["annotator_a"]),
            "traits": TRAITS,
            "theme": st.sampled_from(["virtues", "love"]),
        },
    ),
    round_name=st.sampled_from(["Vòng nhập"]) | st.text(max_size=20),
)
@example(
    file=("f.csv", "expression,annotator,traits,theme\nNước chảy đá mòn,annotator_a,pragmatic,virtues\n".encode()),
    round_name="Vòng nhập",
)
@example(
    file=(
        "f.csv",
        "expression,annotator,traits,theme\nNước chảy đá mòn,annotator_a,,love\nKhông có,annotator_a,,love\n".encode(),
    ),
    round_name="Vòng nhập",
)
def test_it_imports_annotations_completely_or_not_at_all(seed_dataset, annotator_a, file, round_name):
    filename, content = file
    assert_all_or_nothing(
        lambda: annotations_import(dataset=seed_dataset, round_name=round_name, filename=filename, content=content),
        (ImportValidationError, ValidationError),
        lambda exc: _report_text(exc) if isinstance(exc, ImportValidationError) else _django_text(exc),
    )
