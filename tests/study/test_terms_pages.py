"""The terms page: who may open it, the term rows (htmx and plain POST), adding terms, the threshold,
the preparation buttons and the status polling."""

import pytest
from django.urls import reverse

from llm.models import ModelConfig, Provider
from study.models import PrepStatus, Study, StudyStatus, Term, TermSource, TermStatus
from tests.evaluation.fake_openai import FakeOpenAI
from tests.study.factories import make_study, package_dict
from tests.study.fake_wikidata import fake_wikidata  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def study():
    study = make_study(package_dict(n_american=1, n_chinese=2, n_qc=0), status=StudyStatus.DRAFT)
    cn2 = study.artworks.get(key="cn2")
    Term.objects.filter(artwork=cn2).delete()
    Term.objects.create(
        artwork=cn2, term="long life", zh="长寿", wikidata="Q1", source=TermSource.LLM, status=TermStatus.FOUND
    )
    Term.objects.create(artwork=cn2, term="tradition", source=TermSource.LLM, status=TermStatus.NOT_FOUND)
    return study


def terms_url(study):
    return reverse("study:terms", args=[study.slug])


def prepare_url(study):
    return reverse("study:prepare", args=[study.slug])


def term(study, text, key="cn2"):
    return Term.objects.get(artwork__study=study, artwork__key=key, term=text)


@pytest.mark.parametrize("url_name", ["study:terms", "study:prepare"])
def test_it_keeps_the_pages_to_researchers(study, url_name, anonymous_client, outsider_client, annotator_client):
    url = reverse(url_name, args=[study.slug])
    for method in ("get", "post") if url_name == "study:terms" else ("post",):
        response = getattr(anonymous_client, method)(url)
        assert response.status_code == 302 and reverse("login") in response["Location"]
        assert getattr(outsider_client, method)(url).status_code == 403
        assert getattr(annotator_client, method)(url).status_code == 403
    assert Study.objects.get(pk=study.pk).highlight_status == PrepStatus.READY


def test_it_refuses_a_get_on_the_prepare_button(study, researcher_client):
    assert researcher_client.get(prepare_url(study)).status_code == 405


def test_it_shows_terms_descriptions_and_sentence_pairs(study, researcher_client):
    response = researcher_client.get(terms_url(study))

    assert response.status_code == 200
    html = response.content.decode()
    # Only Chinese artworks have a terms section.
    assert 'data-artwork="cn1"' in html and 'data-artwork="cn2"' in html and 'data-artwork="am1"' not in html
    assert 'data-term="long life"' in html and 'value="长寿"' in html
    assert 'href="https://www.wikidata.org/wiki/Q1"' in html
    # The term is marked in the description, with its label.
    assert '<mark class="study-term study-term-found" title="长寿"' in html
    # The factory's pairs match their second sentences.
    assert 'data-pair="am1-american"' in html
    assert "The river flows past a tree." in html and "1.0000" in html
    assert 'data-preparing="no"' in html and "hx-trigger" not in html.split('id="prep-status"')[1].split(">")[0]


def test_it_escapes_descriptions_around_the_marks(study, researcher_client):
    description = study.artworks.get(key="cn2").descriptions.first()
    description.text = "<script>alert(1)</script> a long life & more"
    description.save()
    html = researcher_client.get(terms_url(study)).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; a <mark" in html and "&amp; more" in html


def test_it_confirms_a_row_in_place_with_htmx(study, researcher_client, researcher):
    row = term(study, "long life")
    response = researcher_client.post(
        terms_url(study), {"action": "confirm", "term": row.pk, "zh": "长命", "wikidata": "Q1"}, **HTMX
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith(f'<tr id="term-{row.pk}"') and "<html" not in html
    assert 'data-status="confirmed"' in html and 'value="长命"' in html
    row.refresh_from_db()
    assert (row.zh, row.status, row.confirmed_by) == ("长命", TermStatus.CONFIRMED, researcher)


def test_it_shows_an_error_inside_the_row(study, researcher_client):
    row = term(study, "tradition")
    response = researcher_client.post(terms_url(study), {"action": "confirm", "term": row.pk, "zh": ""}, **HTMX)

    assert response.status_code == 200
    assert 'role="alert"' in response.content.decode()
    assert term(study, "tradition").status == TermStatus.NOT_FOUND


def test_it_saves_and_rejects_without_javascript(study, researcher_client):
    row = term(study, "tradition")
    response = researcher_client.post(
        terms_url(study), {"action": "save", "term": row.pk, "zh": "传统", "wikidata": ""}
    )
    assert response.status_code == 302 and response["Location"].endswith(f"#term-{row.pk}")
    assert (term(study, "tradition").zh, term(study, "tradition").status) == ("传统", TermStatus.FOUND)

    response = researcher_client.post(terms_url(study), {"action": "reject", "term": row.pk}, follow=True)
    assert "tradition: Rejected." in response.content.decode()
    assert term(study, "tradition").status == TermStatus.REJECTED


def test_it_will_not_touch_a_term_of_another_study(study, researcher_client):
    other = make_study(package_dict(slug="other", n_american=0, n_chinese=1, n_qc=0), status=StudyStatus.DRAFT)
    foreign = Term.objects.get(artwork__study=other)
    response = researcher_client.post(terms_url(study), {"action": "reject", "term": foreign.pk})
    assert response.status_code == 404
    assert Term.objects.get(pk=foreign.pk).status == TermStatus.CONFIRMED


def test_it_confirms_all_found_terms(study, researcher_client):
    response = researcher_client.post(terms_url(study), {"action": "confirm_all"}, follow=True)
    assert "1 term found on Wikidata is confirmed." in response.content.decode()
    assert term(study, "long life").status == TermStatus.CONFIRMED
    assert term(study, "tradition").status == TermStatus.NOT_FOUND


def test_it_adds_a_term_found_in_a_description(study, researcher_client):
    cn2 = study.artworks.get(key="cn2")
    prefix = f"add-{cn2.pk}"
    response = researcher_client.post(
        terms_url(study),
        {
            "action": "add",
            "artwork_pk": cn2.pk,
            f"{prefix}-term": "river",
            f"{prefix}-zh": "河",
            f"{prefix}-wikidata": "",
        },
    )
    added = term(study, "river")
    assert response.status_code == 302 and response["Location"].endswith(f"#term-{added.pk}")
    assert (added.source, added.status, added.zh) == (TermSource.RESEARCHER, TermStatus.CONFIRMED, "河")

    response = researcher_client.post(
        terms_url(study),
        {"action": "add", "artwork_pk": cn2.pk, f"{prefix}-term": "dragon boat", f"{prefix}-zh": "龙舟"},
        follow=True,
    )
    assert "does not occur in any description" in response.content.decode()
    assert not Term.objects.filter(term="dragon boat").exists()


def test_it_locks_the_page_of_a_live_study(study, researcher_client):
    Study.objects.filter(pk=study.pk).update(status=StudyStatus.LIVE)
    html = researcher_client.get(terms_url(study)).content.decode()
    assert "can change only while it is a draft or paused" in html
    assert 'name="action" value="confirm"' not in html

    row = term(study, "long life")
    response = researcher_client.post(terms_url(study), {"action": "confirm", "term": row.pk}, follow=True)
    assert "only while it is a draft or paused" in response.content.decode()
    assert term(study, "long life").status == TermStatus.FOUND


def test_it_recomputes_from_the_button_and_polls_until_done(
    study,
    researcher_client,
    eager,
    django_capture_on_commit_callbacks,
    fake_wikidata,  # noqa: F811
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = researcher_client.post(prepare_url(study), HTTP_REFERER="http://testserver" + terms_url(study))
    assert response.status_code == 302 and response["Location"].endswith(terms_url(study))

    # Queued but not yet run: the page polls the status section.
    html = researcher_client.get(terms_url(study)).content.decode()
    assert 'data-preparing="yes"' in html and "?part=status" in html
    partial = researcher_client.get(terms_url(study) + "?part=status", **HTMX)
    assert partial.status_code == 200 and partial.content.decode().lstrip().startswith('<section id="prep-status"')

    for callback in callbacks:
        callback()
    study.refresh_from_db()
    assert (study.highlight_status, study.terms_status) == (PrepStatus.READY, PrepStatus.READY)
    assert term(study, "long life").status == TermStatus.FOUND  # already glossed: not asked again
    done = researcher_client.get(terms_url(study) + "?part=status", **HTMX)
    assert done["HX-Refresh"] == "true"


def test_it_refuses_a_second_preparation_while_one_runs(study, researcher_client):
    Study.objects.filter(pk=study.pk).update(highlight_status=PrepStatus.RUNNING)
    response = researcher_client.post(prepare_url(study), follow=True)
    assert "already running" in response.content.decode()


def test_it_finds_terms_with_a_chosen_model(
    researcher_client,
    eager,
    django_capture_on_commit_callbacks,
    fake_wikidata,  # noqa: F811 - the fixture imported above
):
    package = package_dict(n_american=0, n_chinese=1, n_qc=0)
    package["artworks"][0].pop("terms")
    study = make_study(package, status=StudyStatus.DRAFT)
    with FakeOpenAI(reply=lambda body: "long life\ndragon boat") as server:
        model = ModelConfig.objects.create(
            name="fake-gpt", provider=Provider.OPENAI, base_url=server.base_url, model_id="gpt-4o", timeout=5.0
        )
        with django_capture_on_commit_callbacks(execute=True):
            response = researcher_client.post(prepare_url(study), {"term_model": model.pk}, follow=True)
    assert "terms found with fake-gpt" in response.content.decode()
    found = Term.objects.get(artwork__study=study)
    assert (found.term, found.source, found.zh, found.status) == ("long life", TermSource.LLM, "长寿", TermStatus.FOUND)
    assert server.count == 2  # four descriptions, two distinct texts: the cache answers the repeats
