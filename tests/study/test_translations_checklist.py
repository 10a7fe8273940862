"""Chinese participants read the package in Chinese: the demo study is translated throughout, and the launch
checklist lists every text a group whose language is not English would read in English."""

import random
import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from study.demo import SLUG, demo_package, write_demo_package
from study.models import PrepStatus, Study
from study.selectors.studies import study_checklist
from study.selectors.translations import study_translations_missing
from study.services.imports import study_import
from study.services.participants import prolific_id_for
from study.services.simulation import SyntheticParticipant, answer_key, entry_url, parse_form
from study.services.studies import study_launch

from .factories import make_study, package_dict, write_package

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def translated_package(**fields) -> dict:
    """The factory's package with a "zh-hans" object beside every text a Chinese participant reads."""
    package = package_dict(**fields)
    package["zh-hans"] = {"title": "艺术作品描述研究"}
    for artwork in package["artworks"]:
        artwork["zh-hans"] = {"title": f"作品 {artwork['id']}"}
        for n, element in enumerate(artwork["elements"]):
            element["zh-hans"] = {"name": f"{artwork['id']} 元素 {n}"}
        for question in artwork["questions"]:
            question["zh-hans"] = {
                "question": f"{question['id']} 的问题？",
                "answer": f"{question['id']} 正确答案",
                "distractors": [f"{question['id']} 错误 {n}" for n in range(1, 6)],
            }
    return package


def imported(tmp_path, package: dict) -> Study:
    return study_import(source=write_package(tmp_path / package["slug"], package), start_prepare=False)


def test_it_finds_no_missing_translation_in_the_demo_study(tmp_path):
    study = study_import(source=write_demo_package(tmp_path / "demo"), start_prepare=False)

    assert study_translations_missing(study) == []
    item = {i["key"]: i for i in study_checklist(study)}["translations"]
    assert item == {"key": "translations", "done": True, "detail": {"required": False, "missing": []}}


def test_every_demo_text_a_chinese_participant_reads_is_chinese():
    # No Latin letters in any label: a copied English text would show up here.
    for artwork in demo_package()["artworks"]:
        texts = [artwork["zh-hans"]["title"]]
        texts += [element["zh-hans"]["name"] for element in artwork["elements"]]
        for question in artwork["questions"]:
            zh = question["zh-hans"]
            assert len(zh["distractors"]) == len(question["distractors"]), question["id"]
            assert len({zh["answer"], *zh["distractors"]}) == 6, question["id"]
            texts += [zh["question"], zh["answer"], *zh["distractors"]]
        for text in texts:
            assert not re.search(r"[A-Za-z]", text), (artwork["id"], text)


def test_the_checklist_lists_a_missing_zh_hans_option(tmp_path, researcher_client):
    package = translated_package(slug="one-missing")
    question = package["artworks"][7]["questions"][0]
    # The question is translated, its options are not: the page would show English choices.
    question["zh-hans"] = {"question": question["zh-hans"]["question"]}
    study = imported(tmp_path, package)

    item = {i["key"]: i for i in study_checklist(study)}["translations"]
    assert item["done"] is False and item["detail"]["required"] is False
    assert item["detail"]["missing"] == [
        {
            "group": "chinese",
            "language": "zh-hans",
            "artwork": "cn2",
            "title": "Artwork cn2",
            "question": "cn2-q1",
            "field": "options",
            "english": "cn2 right answer / cn2 wrong 1 / cn2 wrong 2 / cn2 wrong 3 / cn2 wrong 4 / cn2 wrong 5",
        }
    ]

    html = researcher_client.get(reverse("study:detail", args=[study.slug])).content.decode()
    assert 'data-item="translations" data-done="no"' in html
    warning = re.search(r'data-testid="translations-warning">(.*?)</div>', html, re.S).group(1)
    assert "1 text has no translation" in warning
    assert 'data-artwork="cn2" data-question="cn2-q1" data-field="options"' in warning
    assert "answer and distractors" in warning and "cn2 right answer / cn2 wrong 1" in warning

    detail = researcher_client.get(reverse("study_api:study-detail", args=[study.slug])).json()
    (translations,) = [i for i in detail["checklist"] if i["key"] == "translations"]
    assert translations["detail"]["missing"][0]["field"] == "options"


def test_the_checklist_names_each_untranslated_field(tmp_path):
    package = translated_package(slug="several-missing", n_american=1, n_chinese=1, n_qc=1)
    del package["zh-hans"]
    cn1 = package["artworks"][1]
    del cn1["zh-hans"]
    del cn1["elements"][2]["zh-hans"]
    del cn1["questions"][1]["zh-hans"]
    package["consent"] = {"en": "## What you will do\n\nLook at artworks."}
    study = imported(tmp_path, package)

    missing = [
        (row["artwork"], row["question"], row["field"], row["english"]) for row in study_translations_missing(study)
    ]
    assert missing == [
        ("", "", "title", "Artwork descriptions study"),
        ("", "", "consent", "## What you will do\n\nLook at artworks."),
        ("cn1", "", "title", "Artwork cn1"),
        ("cn1", "", "element", "cn1 river"),
        ("cn1", "cn1-q2", "question", "What colour is the sky in cn1?"),
        (
            "cn1",
            "cn1-q2",
            "options",
            "cn1 blue / cn1 colour 1 / cn1 colour 2 / cn1 colour 3 / cn1 colour 4 / cn1 colour 5",
        ),
    ]


def test_a_study_without_a_chinese_group_needs_no_translation():
    # Nothing translated at all: only a group whose language is not English is missing anything.
    study = make_study(package_dict(slug="english-only", groups=["american"]))
    assert study_translations_missing(study) == []
    assert len(study_translations_missing(make_study(package_dict(slug="both-groups")))) > 0


class _Text(HTMLParser):
    """The text nodes a reader sees (attribute values, such as the English option a form sends, are not read)."""

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []

    def handle_data(self, data):
        if data.strip():
            self.texts.append(data.strip())


def visible_texts(html: str) -> set[str]:
    parser = _Text()
    parser.feed(html.split("<main", 1)[1])
    return set(parser.texts)


def test_a_chinese_participant_sees_every_demo_artwork_with_chinese_choices(tmp_path, researcher):
    study = study_import(source=write_demo_package(tmp_path / "demo"), start_prepare=False)
    # Every artwork for one participant, pine and bridge included; no preparation needed for the labels.
    Study.objects.filter(pk=study.pk).update(
        artworks_per_participant=10, highlight_status=PrepStatus.READY, terms_status=PrepStatus.READY
    )
    study.refresh_from_db()
    study_launch(study=study, user=researcher)
    package = demo_package()
    english = set()
    for artwork in package["artworks"]:
        english |= {artwork["title"]} | {element["name"] for element in artwork["elements"]}
        for question in artwork["questions"]:
            english |= {question["question"], question["answer"], *question["distractors"]}

    client = Client()
    client.get(entry_url("", SLUG, pid=prolific_id_for("demo-zh-reader"), group="chinese"))
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=random.Random(3))
    seen_texts = set()
    pages = 0
    for _ in range(200):
        page = client.get(reverse("study:run", args=[SLUG]))
        if page.status_code != 200:
            break
        html = page.content.decode()
        spec = parse_form(html)
        if spec.step.split(":")[-1] in ("symbols", "qa"):
            # Before a description is shown: the page holds only the package's labels and the chrome.
            texts = visible_texts(html)
            assert texts & english == set(), (spec.step, sorted(texts & english))
            seen_texts |= texts
            pages += 1
        client.post(reverse("study:run", args=[SLUG]), bot.answer(spec))
    assert pages == 20
    by_id = {artwork["id"]: artwork for artwork in package["artworks"]}
    for key in ("cn-pine", "am-bridge"):
        artwork = by_id[key]
        assert artwork["zh-hans"]["title"] in seen_texts
        for question in artwork["questions"]:
            zh = question["zh-hans"]
            assert {zh["question"], zh["answer"], *zh["distractors"]} <= seen_texts, question["id"]
    assert {"一座小亭子", "接吻桥", "松树", "廊桥"} <= seen_texts
