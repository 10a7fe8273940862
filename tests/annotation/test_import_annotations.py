"""`manage.py import_annotations`: labels made elsewhere, long format, all or nothing (a contract checked outside the repo)."""

import io
import re
import unicodedata

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import (
    AnnotationRound,
    Assignment,
    AssignmentStatus,
    ItemStatus,
    LabelChange,
    RoundItem,
    RoundStatus,
)
from annotation.selectors import round_funnel
from annotation.services import round_lock, version_freeze
from annotation.services.imports import annotations_import
from core.roles import ANNOTATOR

from .factories import make_annotator, make_dataset, make_round

pytestmark = pytest.mark.django_db

NFC = unicodedata.normalize("NFC", "Ếch ngồi đáy giếng")
NFD = unicodedata.normalize("NFD", NFC)
GOOD = (
    "expression,annotator,theme,traits,note\n"
    "Ăn cháo đá bát,lan,criticism,pragmatic,\n"
    "Ăn cháo đá bát,minh,3,pragmatic,\n"
    f'{NFD},lan,criticism,"pragmatic,literal",\n'
    f'  {NFD.upper()} ,minh,criticism,"5, 1",\n'
    "Tấc đất tấc vàng,lan,work_nature,,\n"
    "Tấc đất tấc vàng,minh,love,,khó\n"
    "xa mặt cách lòng,lan,love,,\n"
)


def run(tmp_path, text: str, *, dataset_name="Ca dao", round_name="Ngoài", name="labels.csv") -> tuple[str, str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "import_annotations", str(path), "--dataset", dataset_name, "--round", round_name, stdout=out, stderr=err
    )
    return out.getvalue(), err.getvalue()


def counts():
    return (
        Assignment.objects.count(),
        RoundItem.objects.count(),
        AnnotationRound.objects.count(),
        User.objects.count(),
        LabelChange.objects.count(),
        sorted(Assignment.objects.values_list("pk", "status", "theme_id", "added_traits")),
    )


def test_it_creates_the_round_inactive_accounts_and_submitted_assignments(tmp_path, small_dataset):
    out, _ = run(tmp_path, GOOD)
    assert out.strip().splitlines()[-1] == "round Ngoài: items 4, annotations 7, unanimous 2, needs_adjudication 1"
    assert "created inactive annotator accounts: lan, minh" in out
    round_ = AnnotationRound.objects.get(name="Ngoài")
    assert round_.dataset == small_dataset and round_.status == RoundStatus.OPEN
    assert round_.annotators_per_item == 2
    assert sorted(round_.annotators.values_list("username", flat=True)) == ["lan", "minh"]
    for username in ("lan", "minh"):
        user = User.objects.get(username=username)
        assert not user.is_active and not user.has_usable_password()
        assert list(user.groups.values_list("name", flat=True)) == [ANNOTATOR]
    assignments = Assignment.objects.filter(item__round=round_)
    assert assignments.count() == 7
    assert set(assignments.values_list("status", flat=True)) == {AssignmentStatus.SUBMITTED}
    frog = assignments.get(item__expression__text=NFC, annotator__username="minh")
    assert (
        frog.added_traits == ["literal", "pragmatic"] and frog.theme.code == "criticism" and frog.trait_decisions == {}
    )
    assert frog.submitted_at is not None and frog.revision == 1
    assert assignments.get(item__expression__text="Tấc đất tấc vàng", annotator__username="minh").note == "khó"
    # Each annotator's queue is numbered in file order.
    assert list(
        assignments.filter(annotator__username="lan").order_by("position").values_list("position", flat=True)
    ) == [1, 2, 3, 4]
    statuses = dict(round_.items.values_list("expression__text", "status"))
    assert statuses == {
        "Ăn cháo đá bát": ItemStatus.UNANIMOUS,  # theme given once as a code, once as a number
        NFC: ItemStatus.UNANIMOUS,
        "Tấc đất tấc vàng": ItemStatus.NEEDS_ADJUDICATION,
        "Xa mặt cách lòng": ItemStatus.PENDING,  # only one annotator so far
    }
    unanimous = round_.items.get(expression__text="Ăn cháo đá bát")
    assert unanimous.final_theme.code == "criticism" and [t.code for t in unanimous.final_traits.all()] == ["pragmatic"]
    history = sorted(LabelChange.objects.filter(assignment=frog).values_list("field", "old_value", "new_value"))
    assert history == [("added_traits", None, ["literal", "pragmatic"]), ("theme", None, "criticism")]


def test_it_agrees_with_the_round_funnel(tmp_path, small_dataset):
    out, _ = run(tmp_path, GOOD)
    funnel = round_funnel(round=AnnotationRound.objects.get(name="Ngoài"))
    assert (funnel["in_round"], funnel["unanimous"], funnel["needs_adjudication"], funnel["final"]) == (4, 2, 1, 2)


def test_it_reads_tsv_jsonl_and_trait_numbers(tmp_path, small_dataset):
    tsv = (
        "expression\tannotator\ttheme\ttraits\nĂn cháo đá bát\tlan\t3\t5\nĂn cháo đá bát\tminh\tcriticism\tpragmatic\n"
    )
    out, _ = run(tmp_path, tsv, name="a.tsv", round_name="TSV")
    assert out.strip().endswith("round TSV: items 1, annotations 2, unanimous 1, needs_adjudication 0")
    jsonl = (
        '{"expression": "Tấc đất tấc vàng", "annotator": "lan", "theme": 4, "traits": ["uncommon_vocabulary"]}\n'
        '{"expression": "Tấc đất tấc vàng", "annotator": "minh", "theme": "work_nature", "traits": "3"}\n'
    )
    out, _ = run(tmp_path, jsonl, name="a.jsonl", round_name="JSONL")
    assert out.strip().endswith("round JSONL: items 1, annotations 2, unanimous 1, needs_adjudication 0")


def test_it_adds_rows_to_an_existing_round_and_refuses_an_already_submitted_pair(tmp_path, small_dataset):
    run(tmp_path, "expression,annotator,theme,traits\nĂn cháo đá bát,lan,criticism,pragmatic\n")
    round_ = AnnotationRound.objects.get(name="Ngoài")
    assert round_.annotators_per_item == 1 and round_.items.get().status == ItemStatus.UNANIMOUS
    out, _ = run(
        tmp_path,
        "expression,annotator,theme,traits\nĂn cháo đá bát,minh,criticism,pragmatic\nXa mặt cách lòng,minh,love,\n",
    )
    assert out.strip().splitlines()[-1] == "round Ngoài: items 2, annotations 2, unanimous 1, needs_adjudication 0"
    round_.refresh_from_db()
    assert round_.items.count() == 2 and round_.annotators.count() == 2 and round_.annotators_per_item == 2
    assert dict(round_.items.values_list("expression__text", "status")) == {
        "Ăn cháo đá bát": ItemStatus.UNANIMOUS,
        "Xa mặt cách lòng": ItemStatus.PENDING,
    }
    assert list(
        Assignment.objects.filter(annotator__username="minh").order_by("position").values_list("position", flat=True)
    ) == [1, 2]
    before = counts()
    with pytest.raises(CommandError):
        run(tmp_path, "expression,annotator,theme,traits\nĂn cháo đá bát,lan,love,\n")
    assert counts() == before


def test_it_fills_in_an_unsubmitted_assignment_of_a_round_made_here(tmp_path, small_dataset):
    a, b = make_annotator("lan"), make_annotator("minh")
    make_round(small_dataset, [a, b], name="Ngoài", seed=1)
    before_assignments = Assignment.objects.count()
    out, _ = run(tmp_path, "expression,annotator,theme,traits\nĂn cháo đá bát,lan,love,\nĂn cháo đá bát,minh,love,\n")
    assert out.strip().splitlines()[-1].endswith("unanimous 1, needs_adjudication 0")
    assert Assignment.objects.count() == before_assignments
    assert User.objects.get(username="lan").is_active  # existing accounts are left as they are


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "expression,annotator,theme,traits\nKhông có câu này,lan,love,\n",
            "row 2, column 'expression': 'Không có câu này' is not in the dataset",
        ),
        (
            'expression,annotator,theme,traits\nĂn cháo đá bát,lan,love,"pragmatic,bogus"\n',
            "row 2, column 'traits': unknown trait 'bogus'",
        ),
        (
            "expression,annotator,theme,traits\nĂn cháo đá bát,lan,romance,\n",
            "row 2, column 'theme': unknown theme 'romance'",
        ),
        ("expression,annotator,theme,traits\nĂn cháo đá bát,lan,9,\n", "row 2, column 'theme': unknown theme '9'"),
        ("expression,annotator,theme,traits\nĂn cháo đá bát,lan,,\n", "row 2, column 'theme': the theme is empty"),
        (
            f"expression,annotator,theme,traits\nĂn cháo đá bát,lan,love,\n{NFC},lan,love,\nĂN CHÁO ĐÁ BÁT,lan,virtues,\n",
            "row 4, column 'annotator': annotator 'lan' already labelled this expression in row 2",
        ),
        (
            "expression,annotator,theme,traits\nĂn cháo đá bát,,love,\n",
            "row 2, column 'annotator': the annotator is empty",
        ),
        (
            "expression,annotator,theme,traits\nĂn cháo đá bát,Nguyễn Lan,love,\n",
            "row 2, column 'annotator': 'Nguyễn Lan' is not a valid user name",
        ),
        ("expression,annotator,traits\nĂn cháo đá bát,lan,\n", "column 'theme': required column is missing"),
        ("expression,annotator,theme,traits\n", "has no data rows"),
    ],
)
def test_it_writes_nothing_and_names_the_row_for_each_error(tmp_path, small_dataset, text, expected):
    run(tmp_path, "expression,annotator,theme,traits\nXa mặt cách lòng,old,love,\n", round_name="Existing")
    before = counts()
    # A good row first: it must not be written either.
    path = tmp_path / "bad.csv"
    header, rows = text.split("\n", 1)
    if "theme" in header and rows:
        text = f"{header}\nTấc đất tấc vàng,lan,love,\n{rows}"
        expected = re.sub(r"row (\d+)", lambda m: f"row {int(m.group(1)) + 1}", expected)
    path.write_text(text, encoding="utf-8")
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command(
            "import_annotations", str(path), "--dataset", "Ca dao", "--round", "Ngoài", stdout=io.StringIO(), stderr=err
        )
    assert counts() == before
    assert expected in err.getvalue()
    assert not User.objects.filter(username="lan").exists()
    assert not AnnotationRound.objects.filter(name="Ngoài").exists()


def test_it_reports_every_bad_row_at_once(tmp_path, small_dataset):
    text = (
        "expression,annotator,theme,traits\nKhông có,lan,love,\nĂn cháo đá bát,lan,nope,\nĂn cháo đá bát,minh,love,x\n"
    )
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"\(3 error\(s\)\)"):
        call_command(
            "import_annotations", str(path), "--dataset", "Ca dao", "--round", "R", stdout=io.StringIO(), stderr=err
        )
    lines = err.getvalue().strip().splitlines()
    assert [line.split(": ", 1)[1].split(",")[0] for line in lines] == ["row 2", "row 3", "row 4"]


def test_it_exits_with_status_1_from_the_command_line(tmp_path, small_dataset):
    path = tmp_path / "bad.csv"
    path.write_text("expression,annotator,theme,traits\nKhông có,lan,love,\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        from django.core.management import ManagementUtility

        ManagementUtility(
            ["manage.py", "import_annotations", str(path), "--dataset", "Ca dao", "--round", "R"]
        ).execute()
    assert exit_info.value.code == 1


def test_it_refuses_a_missing_dataset_file_a_foreign_round_and_a_frozen_one(tmp_path, small_dataset):
    with pytest.raises(CommandError, match="no dataset named 'Nope'"):
        run(tmp_path, GOOD, dataset_name="Nope")
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_annotations", str(tmp_path / "missing.csv"), "--dataset", "Ca dao", "--round", "R")
    other = make_dataset(name="Khác", csv="expression,explanation\nĂn cháo đá bát,x\n", filename="k.csv")
    foreign = make_round(other, [make_annotator("a1"), make_annotator("b1")], name="Foreign")
    before = counts()
    with pytest.raises(CommandError, match="belongs to the dataset 'Khác'"):
        run(tmp_path, GOOD, round_name="Foreign")
    round_lock(round=foreign)
    foreign.items.update(status=ItemStatus.REMOVED)
    version_freeze(round=foreign, name="v", user=None)
    with pytest.raises(CommandError, match="frozen"):
        run(
            tmp_path,
            "expression,annotator,theme,traits\nĂn cháo đá bát,zed,love,\n",
            dataset_name="Khác",
            round_name="Foreign",
        )
    assert counts()[:4] == (before[0], before[1], before[2], before[3])


def test_it_matches_nfd_and_nfc_spellings_to_one_item(tmp_path, small_dataset):
    text = f"expression,annotator,theme,traits\n{NFD},lan,criticism,pragmatic\n{NFC},minh,criticism,pragmatic\n"
    out, _ = run(tmp_path, text)
    assert out.strip().endswith("items 1, annotations 2, unanimous 1, needs_adjudication 0")
    item = RoundItem.objects.get()
    assert item.expression.text == NFC


def test_the_service_reports_a_result_for_callers_other_than_the_cli(small_dataset, researcher):
    result = annotations_import(
        dataset=small_dataset,
        round_name="API",
        filename="x.json",
        user=researcher,
        content='[{"expression": "Ăn cháo đá bát", "annotator": "lan", "theme": "love", "traits": ""}]'.encode(),
    )
    # One annotator per item in the file: the round expects one, so the item is accepted.
    assert result.round_created and result.items == 1 and result.unanimous == 1 and result.accounts_created == ["lan"]
    assert result.round.annotators_per_item == 1
    assert result.round.created_by == researcher
    assert LabelChange.objects.filter(actor=researcher).count() == 2
