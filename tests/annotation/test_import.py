import io
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Dataset, Expression, normalize_key
from annotation.services import expression_import, parse_column_map
from core.tables import ImportReport, ImportValidationError

ROOT = Path(__file__).resolve().parents[2]
NFC = unicodedata.normalize("NFC", "Chưa đủ lông đủ cánh")
NFD = unicodedata.normalize("NFD", "Chưa đủ lông đủ cánh")

pytestmark = pytest.mark.django_db


def write(tmp_path, name, text, *, bom=False):
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def run_import(path, dataset="Corpus", *extra):
    out, err = io.StringIO(), io.StringIO()
    call_command("import_expressions", str(path), "--dataset", dataset, *extra, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def snapshot():
    return (Dataset.objects.count(), Expression.objects.count(), Expression.traits.through.objects.count())


def test_it_treats_nfc_and_nfd_spellings_as_one_expression():
    assert NFC != NFD
    assert normalize_key(NFC) == normalize_key(NFD) == normalize_key("  CHƯA đủ   lông đủ cánh ")


def test_it_imports_a_csv_and_prints_the_contract_summary_last(tmp_path):
    path = write(
        tmp_path,
        "idioms.csv",
        "expression,explanation,kind,traits,theme,source,id\n"
        f"{NFC},Còn non nớt chưa tự lập được,idiom,pragmatic,criticism,Dân gian,x1\n"
        "Ăn quả nhớ kẻ trồng cây,Biết ơn người đi trước,proverb,,virtues,,x2\n",
    )
    out, _ = run_import(path)
    assert out.strip().splitlines()[-1] == "created 2, skipped_duplicates 0"
    dataset = Dataset.objects.get(name="Corpus")
    first = dataset.expressions.get(external_id="x1")
    assert first.kind == "idiom" and first.theme.code == "criticism" and first.source == "Dân gian"
    assert [t.code for t in first.traits.all()] == ["pragmatic"]
    assert dataset.expressions.get(external_id="x2").traits.count() == 0


def test_it_skips_nfc_nfd_duplicates_within_the_file_and_against_the_dataset(tmp_path):
    first = write(tmp_path, "a.csv", f"expression,explanation\n{NFC},Chưa trưởng thành\n")
    run_import(first)
    second = write(
        tmp_path,
        "b.csv",
        f"expression,explanation\n{NFD},Chưa trưởng thành\nĂn cháo đá bát,Vô ơn\nĂN CHÁO  ĐÁ BÁT,Vô ơn\n",
    )
    out, _ = run_import(second)
    assert "skipped row 2" in out and "already in the dataset" in out
    assert "skipped row 4" in out and "same as row 3" in out
    assert out.strip().splitlines()[-1] == "created 1, skipped_duplicates 2"
    assert Expression.objects.count() == 2


def test_it_reads_utf8_with_a_bom(tmp_path):
    path = write(tmp_path, "bom.csv", f"Expression,Explanation\n{NFC},Non nớt\n", bom=True)
    run_import(path)
    assert Expression.objects.get().text == NFC


def test_it_accepts_semicolons_numbers_and_codes_in_traits(tmp_path):
    path = write(
        tmp_path,
        "t.csv",
        'expression,explanation,traits,theme\nA b c,x,"literal; 4 ,pragmatic",4\nD e f,y,2;3,life_lessons\n',
    )
    run_import(path)
    a = Expression.objects.get(text="A b c")
    assert sorted(t.code for t in a.traits.all()) == ["folk_knowledge", "literal", "pragmatic"]
    assert a.theme.code == "work_nature"
    d = Expression.objects.get(text="D e f")
    assert sorted(t.number for t in d.traits.all()) == [2, 3]


def test_it_keeps_unknown_columns_as_metadata(tmp_path):
    path = write(tmp_path, "m.csv", "expression,explanation,english_gloss,Region\nA,x,not yet feathered,Bắc\n")
    out, _ = run_import(path)
    assert "kept as metadata: english_gloss, Region" in out
    assert Expression.objects.get().metadata == {"english_gloss": "not yet feathered", "Region": "Bắc"}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "expression,explanation,traits\nA,x,literal\nB,y,metaphor\n",
            "row 3, column 'traits': unknown trait 'metaphor'",
        ),
        ("expression,explanation\nA,x\nB,\n", "row 3, column 'explanation': the explanation is empty"),
        ("expression,explanation,theme\nA,x,9\n", "row 2, column 'theme': unknown theme '9'"),
        ("expression,explanation,kind\nA,x,riddle\n", "row 2, column 'kind': unknown kind 'riddle'"),
        ("expression,meaning\nA,x\n", "column 'explanation': required column is missing"),
        (",explanation\n,x\n", "column 'expression': required column is missing"),
    ],
)
def test_it_aborts_bad_files_naming_row_and_column_and_writes_nothing(tmp_path, content, expected):
    existing = write(tmp_path, "ok.csv", "expression,explanation\nCó sẵn,x\n")
    run_import(existing)
    before = snapshot()
    path = write(tmp_path, "bad.csv", content)
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_expressions", str(path), "--dataset", "Corpus", stdout=io.StringIO(), stderr=err)
    assert expected in err.getvalue()
    assert snapshot() == before


def test_it_does_not_create_the_dataset_when_the_import_fails(tmp_path):
    path = write(tmp_path, "bad.csv", "expression,explanation\nA,\n")
    with pytest.raises(CommandError):
        run_import(path, "Brand new")
    assert not Dataset.objects.filter(name="Brand new").exists()


def test_it_reports_every_bad_row_not_only_the_first(tmp_path):
    path = write(tmp_path, "bad.csv", "expression,explanation,traits\nA,,\nB,x,zzz\n,y,\n")
    with pytest.raises(ImportValidationError) as excinfo:
        expression_import(dataset_name="Corpus", filename=path.name, content=path.read_bytes())
    rows = [(e.row, e.column) for e in excinfo.value.report.errors]
    assert rows == [(2, "explanation"), (3, "traits"), (4, "expression")]


def test_it_refuses_a_wrong_extension_with_exit_status_1(tmp_path):
    path = write(tmp_path, "idioms.txt", "expression,explanation\nA,x\n")
    env = {**os.environ, "DJANGO_ENV": "test", "VIVID_VAR_DIR": str(tmp_path / "var")}
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "import_expressions", str(path), "--dataset", "X"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "extension '.txt'" in result.stderr and ".xlsx" in result.stderr


def test_it_imports_xlsx(tmp_path):
    path = tmp_path / "idioms.xlsx"
    pd.DataFrame(
        [
            {"Idiom": NFD, "Meaning": "Chưa đủ sức tự lập", "traits": "pragmatic", "theme": 3, "id": 7},
            {"Idiom": "Nước chảy đá mòn", "Meaning": "Kiên trì thì thành công", "traits": "", "theme": "", "id": 8},
        ]
    ).to_excel(path, index=False)
    out, _ = run_import(path, "Corpus", "--map", "expression=Idiom,explanation=Meaning")
    assert out.strip().endswith("created 2, skipped_duplicates 0")
    first = Expression.objects.get(external_id="7")
    assert first.text == NFC and first.theme.code == "criticism"
    assert Expression.objects.get(external_id="8").theme is None


def test_it_imports_json_and_jsonl_with_lists_and_reports_their_row_numbers(tmp_path):
    records = [
        {"expression": "A", "explanation": "x", "traits": ["literal", "folk_knowledge"], "theme": "work_nature"},
        {"expression": "B", "explanation": "y", "traits": "", "extra": {"k": 1}},
    ]
    run_import(write(tmp_path, "a.json", json.dumps(records, ensure_ascii=False)), "J")
    assert sorted(t.code for t in Expression.objects.get(text="A").traits.all()) == ["folk_knowledge", "literal"]
    assert Expression.objects.get(text="B").metadata == {"extra": {"k": 1}}
    jsonl = '{"expression": "C", "explanation": "z"}\n\n{"expression": "D", "explanation": ""}\n'
    with pytest.raises(ImportValidationError) as excinfo:
        expression_import(dataset_name="J", filename="b.jsonl", content=jsonl.encode())
    assert str(excinfo.value.report.errors[0]) == "row 3, column 'explanation': the explanation is empty"


def test_it_imports_tsv(tmp_path):
    run_import(write(tmp_path, "a.tsv", "expression\texplanation\tkind\nA, b\tx, y\tproverb\n"), "T")
    assert Expression.objects.get().text == "A, b"


def test_it_rejects_malformed_json_naming_the_line(tmp_path):
    path = write(tmp_path, "a.jsonl", '{"expression": "A", "explanation": "x"}\n{oops\n')
    with pytest.raises(ImportValidationError, match="row 2: not valid JSON"):
        expression_import(dataset_name="J", filename=path.name, content=path.read_bytes())
    assert Expression.objects.count() == 0


def test_it_rejects_non_utf8(tmp_path):
    content = "expression,explanation\nChưa,x\n".encode("cp1258")
    with pytest.raises(ImportValidationError, match="not UTF-8"):
        expression_import(dataset_name="J", filename="a.csv", content=content)


def test_it_dry_run_validates_and_writes_nothing(tmp_path):
    path = write(tmp_path, "a.csv", "expression,explanation\nA,x\nB,y\n")
    out, _ = run_import(path, "Dry", "--dry-run")
    assert "dry run: nothing was written" in out and out.strip().endswith("created 2, skipped_duplicates 0")
    assert snapshot() == (0, 0, 0)


def test_it_adds_to_an_existing_dataset(tmp_path):
    run_import(write(tmp_path, "a.csv", "expression,explanation\nA,x\n"), "Grow")
    run_import(write(tmp_path, "b.csv", "expression,explanation\nB,y\n"), "Grow")
    assert Dataset.objects.get(name="Grow").expressions.count() == 2


def test_it_imports_a_10_mb_file(tmp_path, settings):
    line = (
        "Một câu tục ngữ rất dài số {n},Lời giải thích đủ dài để lấp đầy tệp thử nghiệm {n} "
        + "x" * 120
        + ",literal;pragmatic,6\n"
    )
    rows, size, n = ["expression,explanation,traits,theme\n"], 0, 0
    while size < 10 * 1024 * 1024:
        rows.append(line.format(n=n))
        size += len(rows[-1].encode())
        n += 1
    path = write(tmp_path, "big.csv", "".join(rows))
    assert path.stat().st_size >= 10 * 1024 * 1024
    report = expression_import(dataset_name="Big", filename=path.name, content=path.read_bytes())
    assert report.created == n == Expression.objects.count()
    assert Expression.traits.through.objects.count() == 2 * n


def test_it_refuses_a_file_over_the_size_limit_and_writes_nothing(settings):
    settings.VIVID_IMPORT_MAX_BYTES = 2048
    content = ("expression,explanation\n" + "A,x\n" * 1000).encode()
    with pytest.raises(ImportValidationError, match="the limit is 2,048 bytes"):
        expression_import(dataset_name="Big", filename="a.csv", content=content)
    assert snapshot() == (0, 0, 0)


def test_it_rejects_a_map_to_a_missing_column(tmp_path):
    path = write(tmp_path, "a.csv", "Idiom,Meaning\nA,x\n")
    with pytest.raises(CommandError):
        run_import(path, "M", "--map", "expression=Idiom,explanation=Gloss")
    assert snapshot() == (0, 0, 0)


@pytest.mark.parametrize("spec", ["expression", "colour=Idiom", "expression="])
def test_it_rejects_a_malformed_map(spec):
    with pytest.raises(ValueError):
        parse_column_map(spec)


def test_it_rejects_an_empty_dataset_name():
    with pytest.raises(ImportValidationError, match="dataset name is required"):
        expression_import(dataset_name="  ", filename="a.csv", content=b"expression,explanation\nA,x\n")


def test_it_refuses_a_row_with_an_unquoted_comma_instead_of_shifting_columns(tmp_path):
    path = write(tmp_path, "a.csv", "expression,explanation,theme\nA,x,love\nB,Khó, nhưng đáng,virtues\n")
    with pytest.raises(ImportValidationError) as excinfo:
        expression_import(dataset_name="C", filename=path.name, content=path.read_bytes())
    assert str(excinfo.value.report.errors[0]) == (
        "row 3: the row has 4 fields but the header has 3 (an unquoted comma or tab?)"
    )
    assert snapshot() == (0, 0, 0)


def test_it_keeps_error_codes_so_pages_can_translate_them(tmp_path):
    from django.utils import translation

    path = write(tmp_path, "a.csv", "expression,explanation\nA,\n")
    with pytest.raises(ImportValidationError) as excinfo:
        expression_import(dataset_name="C", filename=path.name, content=path.read_bytes())
    stored = excinfo.value.report.to_dict()
    assert stored["errors"][0]["code"] == "explanation_empty"
    restored = ImportReport.from_dict(stored)
    with translation.override("vi"):
        assert restored.errors[0].message != "the explanation is empty"
