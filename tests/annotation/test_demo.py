"""The demo CSV and `manage.py seed_demo`."""

import csv
import io
import unicodedata

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import Count, Q
from django.test import Client, RequestFactory
from django.urls import reverse

from annotation.models import Dataset, Expression, Theme, Trait, normalize_key
from annotation.services import DEMO_CSV, DEMO_DATASET_NAME, demo_accounts_ensure, expression_import
from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER

DEMO_PASSWORD = "vivid-demo"
EXPECTED_ACCOUNTS = {
    "annotator_a": ANNOTATOR,
    "annotator_b": ANNOTATOR,
    "adjudicator": ADJUDICATOR,
    "researcher": RESEARCHER,
}


def _login(**credentials) -> bool:
    # Sign-in goes through django-axes, which needs the request (Client.login passes none).
    return Client().login(request=RequestFactory().post(reverse("login")), **credentials)


def _csv_rows() -> list[dict]:
    with DEMO_CSV.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _seed(*args) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


# --- the CSV itself -------------------------------------------------------


def test_it_has_about_forty_rows_with_the_documented_columns():
    rows = _csv_rows()
    assert 35 <= len(rows) <= 45
    assert list(rows[0]) == ["id", "expression", "explanation", "kind", "source", "traits", "theme", "english_gloss"]
    assert len({row["id"] for row in rows}) == len(rows)
    assert all(row["id"].startswith("demo-") for row in rows)
    for row in rows:
        assert row["expression"].strip() and row["explanation"].strip() and row["english_gloss"].strip(), row["id"]
        assert row["kind"] in {"idiom", "proverb"}, row["id"]
        assert row["source"].strip(), row["id"]


def test_it_keeps_every_expression_unique_under_normalize_key():
    keys = [normalize_key(row["expression"]) for row in _csv_rows()]
    assert len(set(keys)) == len(keys)


def test_it_stores_the_csv_in_nfc():
    text = DEMO_CSV.read_text(encoding="utf-8")
    assert unicodedata.normalize("NFC", text) == text


@pytest.mark.django_db
def test_it_uses_only_taxonomy_codes_with_one_theme_per_row():
    trait_codes = set(Trait.objects.values_list("code", flat=True))
    theme_codes = set(Theme.objects.values_list("code", flat=True))
    for row in _csv_rows():
        traits = [code for code in row["traits"].split(",") if code]
        assert set(traits) <= trait_codes, row["id"]
        assert len(traits) == len(set(traits)), row["id"]
        assert row["theme"] in theme_codes, row["id"]


@pytest.mark.django_db
def test_it_imports_cleanly_in_a_dry_run_keeping_english_gloss_as_metadata():
    report = expression_import(dataset_name="dry", filename=DEMO_CSV.name, content=DEMO_CSV.read_bytes(), dry_run=True)
    assert report.ok
    assert report.created == len(_csv_rows())
    assert report.skipped_duplicates == 0
    assert report.metadata_columns == ["english_gloss"]
    assert not Dataset.objects.filter(name="dry").exists()


# --- seed_demo ------------------------------------------------------------


@pytest.mark.django_db
def test_it_creates_the_demo_dataset_with_every_row():
    _seed()
    dataset = Dataset.objects.get(name=DEMO_DATASET_NAME)
    rows = _csv_rows()
    assert dataset.expressions.count() == len(rows) == 40
    assert dataset.description.startswith("Forty well-known Vietnamese idioms")
    assert dataset.created_by.username == "admin"
    first = dataset.expressions.get(external_id="demo-001")
    assert first.text == rows[0]["expression"]
    assert first.explanation == rows[0]["explanation"]
    assert first.kind == rows[0]["kind"]
    assert first.source == rows[0]["source"]


@pytest.mark.django_db
def test_it_covers_every_trait_four_times_and_every_theme_three_times():
    _seed()
    dataset = Dataset.objects.get(name=DEMO_DATASET_NAME)
    trait_counts = dict(
        Trait.objects.annotate(n=Count("expressions", filter=Q(expressions__dataset=dataset))).values_list("code", "n")
    )
    theme_counts = dict(
        Theme.objects.annotate(n=Count("expressions", filter=Q(expressions__dataset=dataset))).values_list("code", "n")
    )
    assert set(trait_counts) == {"literal", "sino_vietnamese", "uncommon_vocabulary", "folk_knowledge", "pragmatic"}
    assert set(theme_counts) == {
        "love",
        "virtues",
        "criticism",
        "work_nature",
        "social_relationships",
        "life_lessons",
        "other",
    }
    assert min(trait_counts.values()) >= 4, trait_counts
    assert min(theme_counts.values()) >= 3, theme_counts
    assert not dataset.expressions.filter(theme__isnull=True).exists()
    # Multi-label traits and trait-less rows both occur.
    multi = dataset.expressions.annotate(n=Count("traits")).filter(n__gte=2).count()
    bare = dataset.expressions.annotate(n=Count("traits")).filter(n=0).count()
    assert multi > 0 and bare > 0


@pytest.mark.django_db
def test_it_keeps_the_english_gloss_as_metadata():
    _seed()
    glosses = {row["id"]: row["english_gloss"] for row in _csv_rows()}
    expressions = Expression.objects.filter(dataset__name=DEMO_DATASET_NAME)
    for expression in expressions:
        assert expression.metadata == {"english_gloss": glosses[expression.external_id]}
    assert expressions.get(external_id="demo-004").metadata["english_gloss"].startswith("One character")


@pytest.mark.django_db
def test_it_creates_accounts_with_their_roles_and_working_passwords():
    _seed()
    for username, role in EXPECTED_ACCOUNTS.items():
        user = User.objects.get(username=username)
        assert list(user.groups.values_list("name", flat=True)) == [role]
        assert not user.is_staff and not user.is_superuser
        assert _login(username=username, password=DEMO_PASSWORD), username
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff and admin.is_active
    assert _login(username="admin", password=DEMO_PASSWORD)
    assert not _login(username="admin", password="wrong")


@pytest.mark.django_db
def test_it_changes_nothing_on_a_second_run():
    _seed()
    before_users = {u.username: (u.password, u.last_login) for u in User.objects.all()}
    before_expressions = set(Expression.objects.values_list("pk", "normalized_key"))
    output = _seed()
    assert "created 0, skipped_duplicates 40" in output
    assert "created 40" not in output
    assert {u.username: (u.password, u.last_login) for u in User.objects.all()} == before_users
    assert set(Expression.objects.values_list("pk", "normalized_key")) == before_expressions
    assert Dataset.objects.filter(name=DEMO_DATASET_NAME).count() == 1
    assert " created" not in output.split("Accounts:", 1)[1].split("\n", 1)[0]


@pytest.mark.django_db
def test_it_lists_the_url_and_every_account_in_its_output():
    output = _seed()
    assert "created 40" in output
    assert "http://127.0.0.1:8000/" in output
    lines = output.splitlines()
    for username, role in [*EXPECTED_ACCOUNTS.items(), ("admin", "Admin (superuser)")]:
        assert any(line.split()[:1] == [username] and role in line and DEMO_PASSWORD in line for line in lines), (
            username
        )
    assert "WARNING" in output and "demo password" in output


@pytest.mark.django_db
def test_it_restores_a_demo_account_that_lost_its_role_or_password():
    _seed()
    user = User.objects.get(username="annotator_b")
    user.groups.clear()
    user.set_password("something-else")
    user.save()
    statuses = {a.username: a.status for a in demo_accounts_ensure(password=DEMO_PASSWORD)}
    assert statuses == {
        "annotator_a": "unchanged",
        "annotator_b": "updated",
        "adjudicator": "unchanged",
        "researcher": "unchanged",
        "admin": "unchanged",
    }
    assert _login(username="annotator_b", password=DEMO_PASSWORD)
    assert User.objects.get(username="annotator_b").groups.filter(name=ANNOTATOR).exists()


@pytest.mark.django_db
def test_it_refuses_to_run_in_production_without_force(settings):
    settings.PRODUCTION = True
    with pytest.raises(CommandError, match="production"):
        _seed()
    assert not Dataset.objects.filter(name=DEMO_DATASET_NAME).exists()
    assert not User.objects.filter(username__in=[*EXPECTED_ACCOUNTS, "admin"]).exists()


@pytest.mark.django_db
def test_it_runs_in_production_with_force(settings):
    settings.PRODUCTION = True
    output = _seed("--force")
    assert "created 40" in output
    assert User.objects.filter(username="admin", is_superuser=True).exists()


# --- the demo round -------------------------------------------------------


def _suggestion_rows() -> list[dict]:
    from annotation.services.demo import DEMO_SUGGESTIONS_CSV

    with DEMO_SUGGESTIONS_CSV.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.django_db
def test_it_writes_suggestions_for_every_demo_expression_with_a_few_deliberate_mistakes():
    gold = {normalize_key(row["expression"]): set(filter(None, row["traits"].split(","))) for row in _csv_rows()}
    suggested = {
        normalize_key(row["expression"]): set(filter(None, row["traits"].split(","))) for row in _suggestion_rows()
    }
    assert set(suggested) == set(gold) and len(suggested) == 40
    trait_codes = set(Trait.objects.values_list("code", flat=True))
    assert set().union(*suggested.values()) <= trait_codes
    wrong = [key for key in gold if gold[key] != suggested[key]]
    # Mostly right, so accepting is the common case, with enough mistakes to reject.
    assert 5 <= len(wrong) <= 12
    assert any(suggested[key] - gold[key] for key in wrong) and any(gold[key] - suggested[key] for key in wrong)


@pytest.mark.django_db
def test_it_seeds_an_open_demo_round_with_honest_suggestions():
    from annotation.models import AnnotationRound, RoundStatus, SuggestionSet

    output = _seed()
    suggestion_set = SuggestionSet.objects.get(dataset__name=DEMO_DATASET_NAME)
    assert suggestion_set.model_name == "demo-suggestions (hand-written, not a model)"
    assert suggestion_set.suggestions.count() == 40
    round_ = AnnotationRound.objects.get(name="Demo round")
    assert round_.status == RoundStatus.OPEN and round_.seed == 2026 and round_.hide_suggestions_fraction == 0.1
    assert round_.suggestion_set == suggestion_set and round_.annotators_per_item == 2
    assert sorted(round_.annotators.values_list("username", flat=True)) == ["annotator_a", "annotator_b"]
    assert round_.items.count() == 40 and round_.items.filter(suggestions_hidden=True).count() == 4
    assert all(item.assignments.count() == 2 for item in round_.items.all())
    assert round_.created_by.username == "researcher"
    assert (
        "Round 'Demo round': created, open for review, 40 items, annotators annotator_a and annotator_b, "
        "4 items with suggestions hidden, seed 2026." in output
    )
    assert _login(username="annotator_a", password=DEMO_PASSWORD)


@pytest.mark.django_db
def test_it_leaves_the_demo_round_and_its_work_alone_on_a_second_run():
    from annotation.models import AnnotationRound, Assignment, RoundItem, RoundStatus, SuggestionSet
    from annotation.services import round_lock

    _seed()
    round_ = AnnotationRound.objects.get(name="Demo round")
    round_lock(round=round_)
    before = (
        sorted(Assignment.objects.values_list("pk", "annotator_id", "position", "item_id")),
        sorted(RoundItem.objects.values_list("pk", "suggestions_hidden")),
        SuggestionSet.objects.count(),
    )
    output = _seed()
    assert "Round 'Demo round': unchanged, locked" in output and "Suggestions 'Demo suggestions'" in output
    assert AnnotationRound.objects.count() == 1 and AnnotationRound.objects.get().status == RoundStatus.LOCKED
    after = (
        sorted(Assignment.objects.values_list("pk", "annotator_id", "position", "item_id")),
        sorted(RoundItem.objects.values_list("pk", "suggestions_hidden")),
        SuggestionSet.objects.count(),
    )
    assert after == before
