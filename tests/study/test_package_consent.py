"""Issue 12, items 4–6: the consent page details, the knew-before question only where a symbol is named,
and the Chinese group's translated titles, elements, questions and options."""

import copy
import io
import random

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from study.models import Answer, Artwork, Participant, ParticipantStatus, Question, Study, StudyStatus
from study.selectors.results import study_export_csv, study_export_rows
from study.selectors.studies import study_checklist, study_launch_blockers
from study.services import participants as flow
from study.services.imports import StudyImportError, study_import
from study.services.participants import prolific_id_for
from study.services.simulation import SyntheticParticipant, answer_key, entry_url, parse_form
from study.steps import participant_step
from study.text import markdown_html

from .factories import make_study, package_dict, write_package

pytestmark = pytest.mark.django_db

CONSENT_MD = (
    "## Your data\n\n- kept *pseudonymous*\n- ask [us](mailto:team@example.org) or [the board](https://ethics.example.org)\n\n"
    "<script>alert('x')</script> [bad](javascript:alert(1)) ![img](https://example.org/i.png)"
)
CONSENT_FIELDS = {
    "estimated_minutes": 25,
    "reward": "£3.75",
    "contact": "Dr Lin, team@example.org",
    "ethics_reference": "ERC-2025-117",
    "consent": {"en": CONSENT_MD, "zh-hans": "## 您的数据\n\n- 以化名保存"},
}


def translated_package(**fields) -> dict:
    """A small package whose first Chinese artwork carries zh-hans labels for every translatable text."""
    # One Chinese artwork among two described ones a session: every session shows cn1.
    package = package_dict(slug="translated", n_american=2, n_chinese=1, n_qc=2, artworks_per_participant=4, **fields)
    cn1 = next(a for a in package["artworks"] if a["id"] == "cn1")
    cn1["zh-hans"] = {"title": "作品一"}
    cn1["elements"][0]["zh-hans"] = {"name": "长寿符号"}
    q1 = cn1["questions"][0]
    q1["zh-hans"] = {
        "question": "这个符号象征什么？",
        "answer": "正确答案",
        "distractors": [f"错误答案{n}" for n in range(1, 6)],
    }
    package["zh-hans"] = {"title": "艺术作品描述研究"}
    return package


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _import(tmp_path, package) -> Study:
    return study_import(source=write_package(tmp_path / "package", package), start_prepare=False)


def _errors(tmp_path, package) -> list[str]:
    with pytest.raises(StudyImportError) as caught:
        _import(tmp_path, package)
    assert Study.objects.count() == 0
    return caught.value.errors


# --- Import -------------------------------------------------------------------------------------


def test_it_imports_the_consent_details_and_the_translations(tmp_path):
    study = _import(tmp_path, translated_package(**CONSENT_FIELDS))
    assert study.package["estimated_minutes"] == 25 and study.package["consent"]["zh-hans"].startswith("## 您")
    cn1 = Artwork.objects.get(study=study, key="cn1")
    assert cn1.translations == {"zh-hans": {"title": "作品一", "elements": {"cn1 symbol": "长寿符号"}}}
    # The canonical English texts stay what is stored and scored.
    assert cn1.title == "Artwork cn1" and cn1.elements[0] == {"name": "cn1 symbol", "is_symbol": True}
    q1 = Question.objects.get(artwork=cn1, key="cn1-q1")
    assert q1.answer == "cn1 right answer"
    assert q1.translations["zh-hans"]["distractors"] == [f"错误答案{n}" for n in range(1, 6)]
    assert Question.objects.get(artwork=cn1, key="cn1-q2").translations == {}
    assert Artwork.objects.get(study=study, key="am1").translations == {}


def test_it_names_the_field_of_each_consent_error(tmp_path):
    errors = _errors(
        tmp_path,
        package_dict(
            consent={"en": "fine", "zh-hans": 3, "fr": "texte"},
            estimated_minutes="20",
            reward=5,
            contact="",
        ),
    )
    assert "consent.zh-hans: expected markdown text" in errors
    assert any(e.startswith("consent.fr: unknown language") for e in errors)
    assert any(e.startswith("estimated_minutes: expected a whole number of minutes") for e in errors)
    assert "reward: expected a string, got int" in errors
    assert "contact: must not be empty" in errors
    assert not any(e.startswith("consent.en") for e in errors)
    assert any(e.startswith("consent: expected an object") for e in _errors(tmp_path, package_dict(consent="text")))


def test_it_names_the_field_of_each_translation_error(tmp_path):
    package = translated_package()
    cn1 = next(a for a in package["artworks"] if a["id"] == "cn1")
    cn1["zh-hans"] = {"title": "", "artist": "某人"}
    cn1["elements"][1]["zh-hans"] = "树"
    cn1["questions"][0]["zh-hans"]["distractors"] = ["一", "二", "三", "四"]
    cn1["questions"][1]["zh-hans"] = {"answer": "蓝色"}
    errors = _errors(tmp_path, package)
    assert 'artwork "cn1".zh-hans.title: must not be empty' in errors
    assert any(e.startswith('artwork "cn1".zh-hans.artist: cannot be translated') for e in errors)
    assert any(e.startswith('artwork "cn1", elements[1].zh-hans: expected an object') for e in errors)
    assert any(e.startswith('artwork "cn1", questions[0].zh-hans.distractors: expected 5 distinct') for e in errors)
    assert 'artwork "cn1", questions[1].zh-hans: translate the answer and the distractors together' in errors


def test_it_renders_only_safe_markdown():
    html = markdown_html(CONSENT_MD)
    assert "<h3>Your data</h3>" in html and "<em>pseudonymous</em>" in html and "<li>" in html
    assert '<a href="mailto:team@example.org" rel="noopener noreferrer"' in html
    assert '<a href="https://ethics.example.org" rel="noopener noreferrer"' in html
    assert "<script" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html
    assert "<img" not in html


# --- The consent page and the checklist -----------------------------------------------------------


def _enter(client, study, pid, group):
    return client.get(entry_url("", study.slug, pid=prolific_id_for(pid), group=group))


def test_it_shows_duration_reward_contact_ethics_and_the_text_on_the_consent_page(client):
    study = make_study(package_dict(slug="consenting", **CONSENT_FIELDS))
    _enter(client, study, "PCONSENT", "american")
    html = client.get(reverse("study:run", args=[study.slug])).content.decode()
    assert 'data-fact="duration">About 25 minutes<' in html
    assert 'data-fact="reward">£3.75<' in html
    assert 'href="mailto:team@example.org"' in html and "ERC-2025-117" in html
    assert "<h3>Your data</h3>" in html and "&lt;script&gt;" in html and "<script>alert" not in html

    chinese = make_study(package_dict(slug="consenting-zh", **CONSENT_FIELDS))
    _enter(client, chinese, "PCONSENTZH", "chinese")
    html = client.get(reverse("study:run", args=[chinese.slug])).content.decode()
    assert "<h3>您的数据</h3>" in html and "Your data" not in html


def test_it_leaves_the_facts_out_when_the_package_has_none(client):
    study = make_study(package_dict(slug="bare"))
    _enter(client, study, "PBARE", "american")
    html = client.get(reverse("study:run", args=[study.slug])).content.decode()
    assert "Consent to take part" in html and 'data-testid="consent-facts"' not in html


def test_it_warns_on_the_checklist_when_consent_details_are_missing_without_blocking_launch(researcher_client):
    study = make_study(package_dict(slug="no-consent-details", reward="£2"), status=StudyStatus.DRAFT)
    item = {i["key"]: i for i in study_checklist(study)}["consent"]
    assert item["done"] is False
    assert item["detail"]["missing"] == ["consent", "estimated_minutes", "contact", "ethics_reference"]
    assert study_launch_blockers(study=study) == []
    html = researcher_client.get(reverse("study:detail", args=[study.slug])).content.decode()
    assert 'data-testid="consent-warning"' in html and "estimated_minutes" in html

    complete = make_study(package_dict(slug="consent-details", **CONSENT_FIELDS), status=StudyStatus.DRAFT)
    assert {i["key"]: i for i in study_checklist(complete)}["consent"]["done"] is True
    html = researcher_client.get(reverse("study:detail", args=[complete.slug])).content.decode()
    assert 'data-testid="consent-warning"' not in html


# --- Knew before: only where a symbol is named ----------------------------------------------------


def _to_first_qa(client, study, pid, group="american"):
    _enter(client, study, pid, group)
    run = reverse("study:run", args=[study.slug])
    participant = Participant.objects.get(prolific_pid=prolific_id_for(pid))
    flow.consent_give(participant=participant)
    participant.refresh_from_db()
    flow.step_submit(participant=participant, step_key="instructions", data={})
    participant.refresh_from_db()
    flow.step_submit(participant=participant, step_key="1:symbols", data={"none": ["1"]})
    participant.refresh_from_db()
    return participant, run


def test_it_asks_knew_before_only_on_questions_that_name_a_symbol(client):
    study = make_study(package_dict(slug="knew"))
    participant, run = _to_first_qa(client, study, "PKNEW")
    spec = parse_form(client.get(run).content.decode())
    assignment = participant.assignments.get(order=1)
    symbol_q, agnostic_q = assignment.artwork.questions.order_by("position")
    assert agnostic_q.symbol == "" and symbol_q.symbol
    assert f"q{symbol_q.pk}-knew" in spec.radios and f"q{agnostic_q.pk}-knew" not in spec.radios

    data = {"step": "1:qa"}
    for question in (symbol_q, agnostic_q):
        data[f"q{question.pk}-choice"] = question.answer
        data[f"q{question.pk}-confidence"] = "3"
    missing = client.post(run, data)
    assert missing.status_code == 422 and "Please answer all three parts" in missing.content.decode()
    assert "Please answer both parts" not in missing.content.decode()
    data[f"q{symbol_q.pk}-knew"] = "no"
    assert client.post(run, data).status_code == 200
    stored = {a.question_id: a.knew_before for a in Answer.objects.filter(assignment=assignment)}
    assert stored == {symbol_q.pk: False, agnostic_q.pk: None}


def test_it_exports_knew_before_of_an_agnostic_question_as_not_asked(client):
    study = make_study(package_dict(slug="knew-export"))
    _to_first_qa(client, study, "PKNEWX")
    run = reverse("study:run", args=[study.slug])
    spec = parse_form(client.get(run).content.decode())
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(1))
    client.post(run, bot.answer(spec))
    rows = [r for r in study_export_rows(study=study, include_test=True) if r["measure"] == "qa"]
    by_type = {r["question_type"]: r["knew_before"] for r in rows}
    assert by_type["agnostic"] is None and isinstance(by_type["attuned"], bool)
    frame = pd.read_csv(io.StringIO(study_export_csv(study=study)), dtype=str, keep_default_na=False)
    agnostic = frame[(frame["measure"] == "qa") & (frame["question_type"] == "agnostic")]
    assert list(agnostic["knew_before"]) == [""]


def test_the_synthetic_participants_and_quality_checks_still_finish():
    study = make_study(package_dict(slug="knew-simulated"))
    call_command("generate_test_responses", study.slug, "--n", "2", "--seed", "3", stdout=io.StringIO())
    done = Participant.objects.filter(study=study, is_test=True)
    assert done.count() == 2 and set(done.values_list("status", flat=True)) == {ParticipantStatus.COMPLETED}
    answers = Answer.objects.filter(assignment__participant__in=done)
    assert not answers.filter(question__symbol="", knew_before__isnull=False).exists()
    assert not answers.exclude(question__symbol="").filter(knew_before__isnull=True).exists()


# --- The Chinese group's translations -------------------------------------------------------------


def _launched(tmp_path, package) -> Study:
    study = _import(tmp_path, package)
    Study.objects.filter(pk=study.pk).update(status=StudyStatus.LIVE, highlight_status="ready", terms_status="ready")
    return Study.objects.get(pk=study.pk)


def _first_qa_on(client, study, pid, group, key):
    """Walk one participant to the pre-description question page of artwork ``key``."""
    participant, run = _to_first_qa(client, study, pid, group)
    for _ in range(40):
        step = participant_step(participant)
        assignment = participant.assignments.get(order=step.order) if step.order else None
        if step.kind == "qa" and assignment.artwork.key == key:
            return participant, run, assignment
        spec = parse_form(client.get(run).content.decode())
        bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(2))
        client.post(run, bot.answer(spec))
        participant.refresh_from_db()
    raise AssertionError(f"{key} never came")


def test_it_shows_a_chinese_participant_the_translated_labels_and_scores_the_english_option(client, tmp_path):
    study = _launched(tmp_path, translated_package())
    participant, run, assignment = _first_qa_on(client, study, "PZH", "chinese", "cn1")
    html = client.get(run).content.decode()
    assert "<title>艺术作品描述研究</title>" in html and "作品一" in html and "Artwork cn1" not in html
    assert "这个符号象征什么？" in html and "长寿符号" in html
    for label in ["正确答案", *[f"错误答案{n}" for n in range(1, 6)]]:
        assert label in html
    # The radio values stay the English options: what is stored and scored.
    offered = {value for values in parse_form(html).radios.values() for value in values}
    assert "cn1 right answer" in offered and "正确答案" not in offered
    # The second question has no translation and stays English.
    assert "What colour is the sky in cn1?" in html

    q1, q2 = assignment.artwork.questions.order_by("position")
    data = {"step": f"{assignment.order}:qa"}
    for question in (q1, q2):
        data[f"q{question.pk}-choice"] = question.answer
        data[f"q{question.pk}-confidence"] = "4"
    data[f"q{q1.pk}-knew"] = "yes"
    assert client.post(run, data).status_code == 200
    stored = Answer.objects.get(assignment=assignment, question=q1)
    assert stored.choice == "cn1 right answer" and stored.is_correct is True


def test_it_keeps_an_american_participant_in_english(client, tmp_path):
    study = _launched(tmp_path, translated_package())
    _participant, run, _assignment = _first_qa_on(client, study, "PAM", "american", "cn1")
    html = client.get(run).content.decode()
    assert "Artwork cn1" in html and "What does the cn1 symbol stand for?" in html
    assert "作品一" not in html and "正确答案" not in html and "艺术作品描述研究" not in html


def test_the_demo_package_fills_the_consent_details_and_translations(tmp_path):
    from study.demo import demo_package

    package = copy.deepcopy(demo_package())
    assert {"consent", "estimated_minutes", "reward", "contact", "ethics_reference"} <= set(package)
    assert set(package["consent"]) == {"en", "zh-hans"}
    assert all("zh-hans" in artwork for artwork in package["artworks"])
