"""The artwork pipeline end to end over real HTTP against the loopback fake OpenAI server,
and once on the built-in SmolLM2."""

import json
import math

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command

from artworks.models import (
    ArtworkCollection,
    ArtworkQuestion,
    CollectionArtwork,
    ListenerAnswer,
    PipelineItem,
    PipelineStep,
    SpeakerCandidate,
)
from artworks.replies import ReplyError, parse_agnostic_questions, truncate_description
from artworks.services.pipeline import artwork_run_execute, artwork_run_start
from artworks.services.pipeline import steps as pipeline_steps
from artworks.services.pipeline.steps import combined_score
from evaluation.models import ItemStatus, RunStatus
from llm.models import ModelConfig
from llm.services import batch_run_cancel, batch_run_resume
from tests.evaluation.factories import stored_model
from tests.evaluation.fake_openai import FakeOpenAI, _first_user_text, pipeline_reply, pipeline_top_tokens

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def collection(db, media):
    collection = ArtworkCollection.objects.create(name="demo")
    for n, culture in enumerate(["chinese", "american"][:1]):
        artwork = CollectionArtwork(
            collection=collection,
            key=f"a{n}",
            title="Lotus Pond",
            artist="Wu",
            date="1650",
            culture=culture,
            comment="A pond with lotus.",
            position=n,
        )
        artwork.image.save(f"a{n}.png", ContentFile(PNG), save=False)
        artwork.save()
    return collection


@pytest.fixture
def server():
    with FakeOpenAI(reply=pipeline_reply) as fake:
        fake.top_tokens = pipeline_top_tokens
        yield fake


@pytest.fixture
def speaker(db, server):
    return stored_model(server, name="speaker", model_id="fake-vlm", max_concurrency=2, supports_vision=True)


@pytest.fixture
def listener(db, server):
    return stored_model(server, name="listener", model_id="fake-vlm", max_concurrency=2, supports_vision=True)


def run_pipeline(collection, speaker, listener, **kwargs):
    run = artwork_run_start(
        collection=collection, speaker=speaker, listener=listener, enqueue=False, **{"samples": 3, **kwargs}
    )
    return artwork_run_execute(run_id=run.pk)


def test_it_runs_every_step_end_to_end_and_sends_the_image_as_a_data_url(collection, speaker, listener, server):
    run = run_pipeline(collection, speaker, listener)

    assert run.status == RunStatus.DONE, list(run.items.values_list("step", "group", "error"))
    artwork = collection.artworks.get()
    assert list(artwork.elements.filter(is_symbol=True).values_list("name", "meaning")) == [("lotus", "purity")]
    assert artwork.background.startswith("The lotus")
    assert artwork.questions.filter(type="attuned").count() == 1
    assert artwork.questions.filter(type="agnostic").count() == 2
    assert SpeakerCandidate.objects.filter(run=run, speaker="base").count() == 2
    assert SpeakerCandidate.objects.filter(run=run, speaker="pragmatic").count() == 6
    answers = ListenerAnswer.objects.filter(run=run)
    assert answers.count() == 3 * 3 * 2  # questions x conditions x groups
    assert all(a.correct for a in answers)
    assert set(answers.filter(group="chinese").values_list("familiar", flat=True)) == {True}
    assert set(answers.filter(group="american").values_list("familiar", flat=True)) == {False}
    assert all(len(a.option_scores) == 6 for a in answers)
    urls = server.image_urls()
    assert urls and all(url.startswith("data:image/png;base64,") for url in urls)
    assert run.reproducibility["image_seen"] == {"builder": True, "speaker": True, "listener": True}
    assert set(run.items.values_list("image_seen", flat=True)) == {True}
    # Kept messages hold the image's digest, not its bytes.
    kept = json.dumps(list(run.items.values_list("messages", flat=True)))
    assert "sha256:" in kept and "AAAA" not in kept
    # The Chinese listener is asked in Chinese, the American one in English.
    listener_texts = [_first_user_text(b) for b in server.bodies() if b.get("max_tokens") == 1]
    assert any("想象你是一位中国人" in t for t in listener_texts)
    assert any("Imagine you are an American" in t for t in listener_texts)


def test_it_retries_a_reply_that_is_not_json_then_fails_the_item_keeping_the_reply(
    collection, speaker, listener, server
):
    def reply(body):
        if "classify them into two categories" in _first_user_text(body):
            return "I think the lotus is a symbol of purity."
        return pipeline_reply(body)

    server.reply = reply
    run = run_pipeline(collection, speaker, listener)

    item = run.items.get(step=PipelineStep.SYMBOLS)
    assert item.status == ItemStatus.FAILED
    assert item.attempts == 3
    assert item.response == "I think the lotus is a symbol of purity."
    assert "no valid JSON" in item.error
    symbol_requests = [b for b in server.bodies() if "classify them into two categories" in _first_user_text(b)]
    assert len(symbol_requests) == 3
    assert len({json.dumps(b, sort_keys=True) for b in symbol_requests}) == 3  # each a new request
    assert "earlier step failed" in run.items.get(step=PipelineStep.BACKGROUND).error
    assert run.status == RunStatus.FAILED
    assert "Culture symbols" in run.error


def test_it_rejects_a_question_with_fewer_than_five_distractors(collection, speaker, listener, server):
    short = [
        {"question": "Q1?", "answer": "A", "type": "easy", "plausible_answers": ["B", "C", "D", "E"]},
        {"question": "Q2?", "answer": "A", "type": "easy", "plausible_answers": ["B", "C", "D", "E", "F"]},
    ]
    with pytest.raises(ReplyError, match="exactly 5 plausible answers, not 4"):
        parse_agnostic_questions(json.dumps(short))

    def reply(body):
        if "two easy fact-based" in _first_user_text(body):
            return json.dumps(short)
        return pipeline_reply(body)

    server.reply = reply
    run = run_pipeline(collection, speaker, listener)
    item = run.items.get(step=PipelineStep.AGNOSTIC_QUESTIONS)
    assert item.status == ItemStatus.FAILED
    assert "exactly 5 plausible answers" in item.error
    assert json.loads(item.response) == short
    assert not ArtworkQuestion.objects.filter(type="agnostic").exists()


def test_it_fails_the_listener_step_clearly_when_the_provider_gives_no_logprobs(collection, speaker, server):
    with FakeOpenAI(reply=pipeline_reply) as bare:
        bare.omit_logprobs = True
        listener = stored_model(bare, name="no-logprobs", model_id="fake-vlm", max_concurrency=2)
        run = run_pipeline(collection, speaker, listener)

    items = run.items.filter(step=PipelineStep.LISTENER)
    assert {i.status for i in items} == {ItemStatus.FAILED}
    assert all("returned no log-probabilities" in i.error for i in items)
    assert run.items.get(step=PipelineStep.PRAGMATIC, group="american").status == ItemStatus.DONE


def test_it_truncates_the_base_description_to_the_last_sentence_within_75_words(collection, speaker, listener):
    run = run_pipeline(collection, speaker, listener)
    base = SpeakerCandidate.objects.get(run=run, group="american", speaker="base")
    assert len(base.raw_text.split()) == 83
    assert base.text.endswith("rises.") and len(base.text.split()) == 43
    assert truncate_description("one two three four five", 3) == "one two three"
    assert truncate_description("One. two three four", 3) == "One."


def test_it_picks_the_pragmatic_argmax_and_mixes_in_the_likelihood_with_lambda(collection, speaker, listener, server):
    def reply(body):
        text = _first_user_text(body)
        if "write an English description" in text and body.get("seed") == 3:
            return "Sample 3 is short."  # fewer tokens: the fake's mean token logprob is highest
        return pipeline_reply(body)

    def top_tokens(body):
        text = _first_user_text(body)
        if "Sample 2 shows" in text:
            return {"Correct": -0.01, "Incorrect": -5.0}
        return {"Correct": -1.0, "Incorrect": -0.5}

    server.reply, server.top_tokens = reply, top_tokens
    run = run_pipeline(collection, speaker, listener, groups=["american"])
    candidates = SpeakerCandidate.objects.filter(run=run, speaker="pragmatic").order_by("index")
    assert [c.index for c in candidates if c.chosen] == [2]
    best = candidates.get(index=2)
    assert best.listener_score == pytest.approx(1 / (1 + math.exp(-5.0 + 0.01)))
    assert best.combined == pytest.approx(math.log(best.listener_score))

    mixed = run_pipeline(collection, speaker, listener, groups=["american"], lam=1.0)
    chosen = SpeakerCandidate.objects.get(run=mixed, speaker="pragmatic", chosen=True)
    assert chosen.index == 3 and chosen.combined == pytest.approx(chosen.likelihood)
    assert combined_score(lam=0.5, likelihood=-1.0, listener_score=0.5) == pytest.approx(0.5 * -1 + 0.5 * math.log(0.5))


def test_it_answers_with_the_listener_argmax(collection, speaker, listener, server):
    def top_tokens(body):
        if "Wrong meaning 3" in _first_user_text(body):
            return {"Correct": -0.01, "Incorrect": -4.0}
        return pipeline_top_tokens(body)

    server.top_tokens = top_tokens
    run = run_pipeline(collection, speaker, listener, groups=["american"])
    answers = ListenerAnswer.objects.filter(run=run)
    assert answers.count() == 9
    for answer in answers:
        assert answer.chosen.startswith("Wrong meaning 3") and not answer.correct
        best = max(answer.option_scores, key=lambda s: s["p_correct"])
        assert best["option"] == answer.chosen


def test_it_sends_no_duplicate_request_on_resume_or_a_second_run(collection, speaker, listener, server):
    run = artwork_run_start(collection=collection, speaker=speaker, listener=listener, samples=2, enqueue=False)
    batch_run_cancel(run=run)
    batch_run_resume(run=run)
    run = artwork_run_execute(run_id=run.pk)
    assert run.status == RunStatus.DONE
    sent = server.count
    assert server.duplicates() == []

    again = run_pipeline(collection, speaker, listener, samples=2)
    assert again.status == RunStatus.DONE
    # Construction is done (nothing left to build), and every other request is cached.
    assert not again.items.filter(step=PipelineStep.SYMBOLS).exists()
    assert server.count == sent
    assert ListenerAnswer.objects.filter(run=again).count() == ListenerAnswer.objects.filter(run=run).count()


def test_it_prints_the_run_id_first_and_waits(collection, speaker, listener, capsys):
    call_command(
        "run_artwork_pipeline",
        "--collection",
        "demo",
        "--speaker",
        "speaker",
        "--listener",
        "listener",
        "--samples",
        "2",
        "--limit",
        "1",
        "--wait",
    )
    lines = capsys.readouterr().out.splitlines()
    run_id = int(lines[0])
    assert PipelineItem.objects.filter(run_id=run_id, status=ItemStatus.DONE).exists()
    assert lines[-1].startswith(f"run {run_id} done: ")


def test_it_runs_on_the_builtin_smollm2_and_fails_cleanly(smollm2, collection, monkeypatch):
    # Two attempts, not three: the retry with the error as feedback is the path a third repeats, at
    # 1.2-2.3 s of prefill each on one CPU thread.
    monkeypatch.setattr(pipeline_steps, "REPLY_ATTEMPTS", 2)
    model = ModelConfig.objects.get(name="smollm2-135m")
    run = artwork_run_start(
        collection=collection, speaker=model, listener=model, samples=2, limit=1, max_tokens=8, enqueue=False
    )
    run = artwork_run_execute(run_id=run.pk)

    assert run.status in (RunStatus.DONE, RunStatus.FAILED)
    assert not run.items.filter(status=ItemStatus.PENDING).exists()
    assert run.reproducibility["image_seen"] == {"builder": False, "speaker": False, "listener": False}
    assert True not in set(run.items.values_list("image_seen", flat=True))
    for item in run.items.filter(status=ItemStatus.FAILED, step=PipelineStep.SYMBOLS):
        assert item.error and item.attempts == 2 and item.response  # the unparseable reply is kept
    assert SpeakerCandidate.objects.filter(run=run, speaker="base").count() == 2


def test_it_builds_the_questions_with_the_builder_model_when_one_is_chosen(collection, speaker, listener, server):
    builder = stored_model(server, name="builder", model_id="fake-builder", max_concurrency=2)
    run = run_pipeline(collection, speaker, listener, builder=builder, samples=1, limit=1)
    assert run.status == RunStatus.DONE, run.error
    by_model = {}
    for body in server.bodies():
        text = str(body["messages"])
        kind = (
            "construction"
            if ("plausible_answers" in text or "Non-symbols" in text or "Art Comment" in text)
            else "other"
        )
        by_model.setdefault(kind, set()).add(body["model"])
    assert by_model["construction"] == {"fake-builder"}
    assert "fake-builder" not in by_model["other"]
    assert "fake-builder" in str(run.reproducibility["builder"])
