"""Preparing a study: sentence pairs with the real model, terms found by an LLM (fake OpenAI server),
glossed on Wikidata (fake server), the researcher's term review, and the Celery task."""

import pytest
from django.core.exceptions import ValidationError

from llm.models import ModelConfig, Provider, ResponseCache
from llm.services.complete import model_complete
from study.models import DescriptionPair, PrepStatus, Study, StudyStatus, Term, TermSource, TermStatus
from study.services import prep
from study.tasks import study_prepare_task
from tests.conftest import make_user
from tests.evaluation.fake_openai import FakeOpenAI
from tests.study.factories import make_study, package_dict
from tests.study.fake_wikidata import fake_wikidata  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

# Pragmatics Meets Culture, Appendix A.1, as printed (line breaks restored).
PAPER_PROMPT = (
    "**Task:** From the Chinese artwork description below, identify words that are only culturally specific to "
    "Chinese whose translation into Chinese would help non-Chinese audiences better understand the artwork.\n\n"
    "**Description:** {description}\n\n**List of culturally specific word:**"
)

CN2_TEXTS = {
    "base": "A crane stands under a pine tree. Beside it grows a red peony. The painting is on silk.",
    "pragmatic": (
        "A crane stands under a pine tree, a wish for long life. Beside it grows a red peony, the flower of "
        "wealth. A qilin is hidden in the clouds."
    ),
}
LLM_REPLY = "1. **Crane** - a symbol of longevity\n2. Peony\n3. dragon boat\n- qilin (麒麟)\n4. Crane"


def study_package(**fields) -> dict:
    """Two Chinese artworks: cn1 with a package term, cn2 without, so the model is asked about cn2 only."""
    package = package_dict(n_american=1, n_chinese=2, n_qc=0, **fields)
    for artwork in package["artworks"]:
        if artwork["id"] == "cn2":
            artwork.pop("terms")
            for description in artwork["descriptions"]:
                description["text"] = CN2_TEXTS[description["speaker"]]
    return package


@pytest.fixture
def draft_study():
    return make_study(study_package(), status=StudyStatus.DRAFT)


@pytest.fixture
def term_server():
    with FakeOpenAI(reply=lambda body: LLM_REPLY) as server:
        yield server


@pytest.fixture
def term_model(term_server):
    return ModelConfig.objects.create(
        name="fake-gpt-4o",
        provider=Provider.OPENAI,
        base_url=term_server.base_url,
        model_id="gpt-4o",
        timeout=5.0,
        max_concurrency=2,
    )


def test_it_asks_for_terms_with_the_papers_prompt():
    assert prep.TERM_PROMPT == PAPER_PROMPT
    messages = prep.term_prompt("A {curly} crane.")
    assert messages == [{"role": "user", "content": PAPER_PROMPT.replace("{description}", "A {curly} crane.")}]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('["peony", "crane", "qilin"]', ["peony", "crane", "qilin"]),
        ('```json\n["peony", "crane"]\n```', ["peony", "crane"]),
        ("peony, crane; qilin", ["peony", "crane", "qilin"]),
        (
            "1. Peony\n2) crane\n- qilin\n* pine tree\n• Ming dynasty",
            ["Peony", "crane", "qilin", "pine tree", "Ming dynasty"],
        ),
        ('**Peony**: flower of wealth\n2. "crane" — longevity\n3. qilin (麒麟)', ["Peony", "crane", "qilin"]),
        ("peony\nPeony\n\n", ["peony"]),
    ],
)
def test_it_reads_the_models_list_in_any_usual_shape(reply, expected):
    assert prep.parse_term_list(reply) == expected


def test_it_finds_terms_that_occur_in_the_text_only():
    text = "A Crane stands under a pine tree."
    assert prep.term_occurrence("crane", text) == "Crane"
    assert prep.term_occurrence("pine  tree", text) == "pine tree"
    assert prep.term_occurrence("pine", "Pineapples grow here.") is None
    assert prep.term_occurrence("dragon boat", text) is None


def test_it_prepares_a_study_end_to_end(draft_study, term_server, term_model, fake_wikidata):  # noqa: F811
    DescriptionPair.objects.filter(artwork__study=draft_study).update(matches=[], model_name="", computed_at=None)

    study = prep.study_prepare(study=draft_study, term_model=term_model)

    assert (study.highlight_status, study.highlight_error, study.highlight_model) == (
        PrepStatus.READY,
        "",
        "all-MiniLM-L6-v2",
    )
    pairs = DescriptionPair.objects.filter(artwork__study=study)
    assert pairs.count() == 6
    for pair in pairs:
        assert pair.model_name == "all-MiniLM-L6-v2" and pair.computed_at is not None
    # The factory's descriptions share the sentence "The river flows past a tree." word for word.
    am1 = pairs.get(artwork__key="am1", listener="american")
    assert [1, 1, 1.0] in am1.matches

    assert (study.terms_status, study.terms_error) == (PrepStatus.READY, "")
    # The model was asked once per description of cn2 only (cn1's package has terms), with the paper's prompt.
    sent = [body["messages"][0]["content"] for body in term_server.bodies()]
    cn2_texts = [d["text"] for a in study.package["artworks"] if a["id"] == "cn2" for d in a["descriptions"]]
    # Both listener groups' descriptions share two texts: the cache answers the repeats.
    assert sorted(sent) == sorted(PAPER_PROMPT.replace("{description}", text) for text in set(cn2_texts))
    assert all(body["model"] == "gpt-4o" and body["temperature"] == 0.0 for body in term_server.bodies())

    cn2 = {t.term: t for t in Term.objects.filter(artwork__key="cn2", artwork__study=study)}
    assert set(cn2) == {"crane", "peony", "qilin"}  # "dragon boat" is not in the text; "Crane" is "crane"
    assert {t.source for t in cn2.values()} == {TermSource.LLM}
    assert (cn2["peony"].zh, cn2["peony"].wikidata, cn2["peony"].status) == ("牡丹", "Q171497", TermStatus.FOUND)
    assert (cn2["crane"].zh, cn2["crane"].status) == ("鹤", TermStatus.FOUND)
    assert (cn2["qilin"].zh, cn2["qilin"].status) == ("麒麟", TermStatus.FOUND)
    # The package term kept its label and was not looked up.
    cn1 = Term.objects.get(artwork__key="cn1", artwork__study=study)
    assert (cn1.term, cn1.zh, cn1.status, cn1.source) == ("long life", "长寿", TermStatus.CONFIRMED, TermSource.PACKAGE)
    assert "long life" not in [r["params"].get("search") for r in fake_wikidata.requests]


def test_it_does_not_duplicate_terms_when_run_again(draft_study, term_server, term_model, fake_wikidata):  # noqa: F811
    prep.study_prepare(study=draft_study, term_model=term_model)
    peony = Term.objects.get(artwork__study=draft_study, term="peony")
    prep.term_reject(term=peony, user=None)
    asked = term_server.count

    prep.study_prepare(study=draft_study, term_model=term_model)

    assert Term.objects.filter(artwork__study=draft_study, artwork__key="cn2").count() == 3
    assert Term.objects.get(pk=peony.pk).status == TermStatus.REJECTED
    assert term_server.count == asked  # the replies came from the response cache


def test_it_looks_up_package_terms_without_a_label(fake_wikidata):  # noqa: F811
    package = study_package()
    package["artworks"][1]["terms"] = [{"term": "long life", "zh": ""}]
    study = make_study(package, status=StudyStatus.DRAFT)
    Term.objects.filter(artwork__study=study).update(zh="", status=TermStatus.PENDING)
    missing = Term.objects.create(
        artwork=study.artworks.get(key="cn2"), term="silk", source=TermSource.PACKAGE, status=TermStatus.PENDING
    )

    prep.study_prepare(study=study)

    term = Term.objects.get(artwork__study=study, term="long life")
    assert (term.zh, term.wikidata, term.status) == ("长寿", "Q1", TermStatus.FOUND)
    missing.refresh_from_db()
    assert (missing.zh, missing.status) == ("", TermStatus.NOT_FOUND)
    study.refresh_from_db()
    assert study.terms_status == PrepStatus.READY


def test_it_records_a_wikidata_outage_as_a_failed_term_step(draft_study, fake_wikidata, settings):  # noqa: F811
    settings.WIKIDATA_MAX_ATTEMPTS = 2
    Term.objects.create(artwork=draft_study.artworks.get(key="cn2"), term="peony", source=TermSource.LLM)
    fake_wikidata.busy(times=5)

    study = prep.study_prepare(study=draft_study)

    assert study.highlight_status == PrepStatus.READY
    assert study.terms_status == PrepStatus.FAILED
    assert "still busy after 2 attempts" in study.terms_error
    assert Term.objects.get(term="peony").status == TermStatus.PENDING


def test_it_records_a_missing_embedding_model_as_a_failed_highlight_step(draft_study, settings, fake_wikidata):  # noqa: F811
    settings.STUDY_EMBEDDING_MODEL = "/nonexistent/embedding-model"

    study = prep.study_prepare(study=draft_study)

    assert study.highlight_status == PrepStatus.FAILED
    assert study.highlight_error
    assert study.terms_status == PrepStatus.READY


def test_it_keeps_the_llm_step_failure_on_the_study(draft_study, term_server, term_model, fake_wikidata, settings):  # noqa: F811
    settings.EVAL_MAX_ATTEMPTS = 2
    term_server.fail(500, times=5)
    term_server.reply = lambda body: LLM_REPLY

    study = prep.study_prepare(study=draft_study, term_model=term_model)

    assert study.terms_status == PrepStatus.FAILED
    assert study.terms_error
    assert term_server.count == 2


def test_it_completes_through_the_cache_and_retries(term_server, term_model, settings):
    settings.EVAL_BACKOFF_BASE = 0.001
    term_server.fail(429, retry_after="0")
    messages = [{"role": "user", "content": "Name a flower."}]

    first = model_complete(model=term_model, messages=messages, max_tokens=20)
    second = model_complete(model=term_model, messages=messages, max_tokens=20)

    assert first == second == LLM_REPLY
    assert term_server.count == 2  # a 429, then the answer; the second call was served from the cache
    assert ResponseCache.objects.count() == 1
    assert not term_model.slots.exclude(holder="").exists()  # the lease was given back


def test_it_queues_one_preparation_at_a_time(draft_study, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        study = prep.study_prepare_start(study=draft_study)
    assert (study.highlight_status, study.terms_status) == (PrepStatus.RUNNING, PrepStatus.RUNNING)
    assert len(callbacks) == 1

    with django_capture_on_commit_callbacks() as callbacks, pytest.raises(ValidationError, match="already running"):
        prep.study_prepare_start(study=draft_study)
    assert callbacks == []

    with django_capture_on_commit_callbacks() as callbacks:
        prep.study_prepare_start(study=draft_study, force=True)
    assert len(callbacks) == 1


def test_it_refuses_to_change_the_stimuli_of_a_live_study(fake_wikidata):  # noqa: F811
    study = make_study(study_package())
    term = Term.objects.filter(artwork__study=study).first()
    researcher = make_user("r1")

    for call in (
        lambda: prep.study_prepare_start(study=study),
        lambda: prep.study_threshold_set(study=study, threshold=0.9),
        lambda: prep.term_confirm(term=term, user=researcher, zh="改"),
        lambda: prep.term_reject(term=term, user=researcher),
        lambda: prep.terms_confirm_all(study=study, user=researcher),
        lambda: prep.term_add(artwork=term.artwork, term="river", zh="河", user=researcher),
    ):
        with pytest.raises(ValidationError, match="only while it is a draft or paused"):
            call()
    study.refresh_from_db()
    assert study.highlight_status == PrepStatus.READY and study.similarity_threshold == 0.8
    assert Term.objects.get(pk=term.pk).zh == "长寿"


def test_it_runs_the_task_eagerly_and_recomputes_with_a_new_threshold(
    draft_study,
    eager,
    django_capture_on_commit_callbacks,
    fake_wikidata,  # noqa: F811
):
    study_prepare_task.delay(draft_study.pk)
    pair = DescriptionPair.objects.get(artwork__key="cn2", listener="chinese")
    loose = pair.matches
    assert loose and pair.model_name == "all-MiniLM-L6-v2"

    with django_capture_on_commit_callbacks(execute=True):
        prep.study_threshold_set(study=draft_study, threshold=0.999)

    pair.refresh_from_db()
    study = Study.objects.get(pk=draft_study.pk)
    assert study.similarity_threshold == 0.999
    assert (study.highlight_status, study.terms_status) == (PrepStatus.READY, PrepStatus.READY)
    assert pair.matches == [m for m in loose if m[2] >= 0.999]
    assert pair.matches != loose


def test_it_runs_the_task_with_a_term_model(draft_study, eager, term_server, term_model, fake_wikidata):  # noqa: F811
    study_prepare_task.delay(draft_study.pk, term_model.pk)
    assert Term.objects.filter(artwork__study=draft_study, source=TermSource.LLM, status=TermStatus.FOUND).count() == 3

    ModelConfig.objects.filter(pk=term_model.pk).delete()
    study_prepare_task.delay(draft_study.pk, term_model.pk)
    study = Study.objects.get(pk=draft_study.pk)
    assert study.highlight_status == PrepStatus.READY
    assert (study.terms_status, study.terms_error) == (
        PrepStatus.FAILED,
        "the model chosen to find terms no longer exists",
    )


def test_it_rejects_a_threshold_out_of_range(draft_study):
    for bad in (0, 1.5, -0.2, "abc"):
        with pytest.raises(ValidationError):
            prep.study_threshold_set(study=draft_study, threshold=bad)
    assert Study.objects.get(pk=draft_study.pk).similarity_threshold == 0.8


class TestTermReview:
    @pytest.fixture
    def reviewer(self):
        return make_user("reviewer")

    @pytest.fixture
    def terms(self, draft_study):
        cn2 = draft_study.artworks.get(key="cn2")
        return {
            "peony": Term.objects.create(
                artwork=cn2, term="peony", zh="牡丹", wikidata="Q171497", source=TermSource.LLM, status=TermStatus.FOUND
            ),
            "crane": Term.objects.create(
                artwork=cn2, term="crane", zh="鹤", source=TermSource.LLM, status=TermStatus.FOUND
            ),
            "silk": Term.objects.create(artwork=cn2, term="silk", source=TermSource.LLM, status=TermStatus.NOT_FOUND),
        }

    def test_it_confirms_a_term_with_an_edited_label(self, terms, reviewer):
        term = prep.term_confirm(term=terms["crane"], user=reviewer, zh=" 仙鹤 ", wikidata="q25420")
        term.refresh_from_db()
        assert (term.zh, term.wikidata, term.status, term.confirmed_by) == (
            "仙鹤",
            "Q25420",
            TermStatus.CONFIRMED,
            reviewer,
        )

    def test_it_refuses_to_confirm_without_a_label_or_with_a_bad_item(self, terms, reviewer):
        with pytest.raises(ValidationError, match="Chinese label"):
            prep.term_confirm(term=terms["silk"], user=reviewer)
        with pytest.raises(ValidationError, match="Q1234"):
            prep.term_confirm(term=terms["peony"], user=reviewer, wikidata="peony")
        assert Term.objects.get(pk=terms["silk"].pk).status == TermStatus.NOT_FOUND

    def test_it_rejects_a_term(self, terms, reviewer):
        prep.term_reject(term=terms["peony"], user=reviewer)
        assert Term.objects.get(pk=terms["peony"].pk).status == TermStatus.REJECTED

    def test_it_saves_a_label_without_deciding(self, terms, reviewer):
        prep.term_edit(term=terms["silk"], user=reviewer, zh="丝绸")
        assert Term.objects.get(pk=terms["silk"].pk).status == TermStatus.FOUND
        prep.term_confirm(term=terms["silk"], user=reviewer)
        prep.term_edit(term=terms["silk"], user=reviewer, zh="绢")
        silk = Term.objects.get(pk=terms["silk"].pk)
        assert (silk.zh, silk.status) == ("绢", TermStatus.CONFIRMED)
        with pytest.raises(ValidationError, match="reject the term instead"):
            prep.term_edit(term=silk, user=reviewer, zh="")

    def test_it_confirms_every_found_term_at_once(self, draft_study, terms, reviewer):
        assert prep.terms_confirm_all(study=draft_study, user=reviewer) == 2
        statuses = dict(Term.objects.filter(artwork__key="cn2").values_list("term", "status"))
        assert statuses == {"peony": TermStatus.CONFIRMED, "crane": TermStatus.CONFIRMED, "silk": TermStatus.NOT_FOUND}

    def test_it_adds_a_term_that_occurs_in_a_description(self, draft_study, terms, reviewer):
        cn2 = draft_study.artworks.get(key="cn2")
        term = prep.term_add(artwork=cn2, term="Pine  Tree", zh="松树", user=reviewer)
        assert (term.term, term.zh, term.source, term.status, term.confirmed_by) == (
            "pine tree",
            "松树",
            TermSource.RESEARCHER,
            TermStatus.CONFIRMED,
            reviewer,
        )
        with pytest.raises(ValidationError, match="does not occur in any description"):
            prep.term_add(artwork=cn2, term="dragon boat", zh="龙舟", user=reviewer)
        with pytest.raises(ValidationError, match="already listed"):
            prep.term_add(artwork=cn2, term="PEONY", zh="牡丹", user=reviewer)
        with pytest.raises(ValidationError):
            prep.term_add(artwork=cn2, term="crane", zh="", user=reviewer)

    def test_it_allows_edits_while_paused(self, draft_study, terms, reviewer):
        Study.objects.filter(pk=draft_study.pk).update(status=StudyStatus.PAUSED)
        prep.term_reject(term=terms["crane"], user=reviewer)
        assert Term.objects.get(pk=terms["crane"].pk).status == TermStatus.REJECTED


def test_it_leaves_a_researchers_edit_made_during_the_lookup(draft_study, fake_wikidata, monkeypatch):  # noqa: F811
    term = Term.objects.create(artwork=draft_study.artworks.get(key="cn2"), term="peony", source=TermSource.LLM)
    real = prep.wikidata_label

    def edited_meanwhile(text):
        Term.objects.filter(pk=term.pk).update(zh="芍药", status=TermStatus.CONFIRMED)
        return real(text)

    monkeypatch.setattr(prep, "wikidata_label", edited_meanwhile)
    prep.terms_lookup(study=draft_study)
    term.refresh_from_db()
    assert (term.zh, term.status) == ("芍药", TermStatus.CONFIRMED)


def test_it_says_how_to_go_on_when_the_task_runs_out_of_time(draft_study, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    def out_of_time(**kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(prep, "terms_lookup", out_of_time)
    Study.objects.filter(pk=draft_study.pk).update(terms_status=PrepStatus.RUNNING)
    with pytest.raises(SoftTimeLimitExceeded):  # Celery must see its time limit, not a success
        prep.study_prepare(study=draft_study)
    study = Study.objects.get(pk=draft_study.pk)
    assert study.terms_status == PrepStatus.FAILED
    assert "ran out of time; run it again" in study.terms_error
