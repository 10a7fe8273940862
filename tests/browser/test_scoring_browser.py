"""Human scoring end to end in a real browser: two raters score the shared items, a researcher opens the report.

The quality bar of issue 5: the researcher creates a scoring task from a
finished generation run, annotators A and B score their queues blind with the
keyboard (each submit swaps the next item in place), and the researcher reads
the judge-versus-human report (Table 1) in the page and as JSON. A rater is
refused the report.
"""

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.models import Dataset
from annotation.services import expression_import
from core.roles import ANNOTATOR, RESEARCHER
from evaluation.models import (
    HumanRating,
    ItemStatus,
    PromptTemplate,
    RatingStatus,
    Run,
    RunItem,
    RunKind,
    RunStatus,
    ScoringTask,
)
from llm.models import ModelConfig, Provider
from tests.conftest import make_user

# The live server reads the database from another thread, so the test cannot hide
# inside a transaction; serialized_rollback restores what the data migrations wrote.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

GENERATION_MODEL = "mo-hinh-bi-mat-4821"
JUDGE_MODEL = "trong-tai-bi-mat-5530"
TASK_NAME = "Đợt chấm thử"

# Expression -> (reference explanation, the generated explanation raters score).
CORPUS = {
    "Nước chảy đá mòn": ("Kiên trì bền bỉ thì việc khó mấy cũng làm được.", "Cứ kiên trì mãi thì việc gì cũng thành."),
    "Tốt gỗ hơn tốt nước sơn": ("Phẩm chất bên trong quý hơn vẻ bề ngoài.", "Gỗ tốt thì bền hơn lớp sơn đẹp."),
    "Ăn cháo đá bát": ("Chê kẻ vô ơn với người đã giúp mình.", "Nói người được giúp rồi quay lại hại ân nhân."),
    "Uống nước nhớ nguồn": ("Nhớ ơn những người đi trước đã tạo dựng thành quả.", "Biết ơn cội nguồn, tổ tiên."),
    "Có công mài sắt có ngày nên kim": (
        "Chăm chỉ nhẫn nại thì sẽ thành công.",
        "Bền chí làm lâu thì việc khó cũng xong.",
    ),
    "Lá lành đùm lá rách": ("Người khá giả giúp đỡ người khó khăn.", "Khuyên mọi người đùm bọc nhau."),
}
TEXTS = list(CORPUS)

# Judge scores per expression index (None: the reply could not be read) and a reply that must never reach a rater.
JUDGES = {
    "aspect": {"scores": [5, 2, 4, 3, 4, None], "reply": "NHAN-XET-KHIA-CANH-93f1 Điểm tổng thể: {score}/5"},
    "cot": {"scores": [4, 3, None, 4, 5, 2], "reply": "SUY-LUAN-TUNG-BUOC-c07e Điểm cuối cùng: {score}"},
}
JUDGE_MARKERS = ("NHAN-XET-KHIA-CANH-93f1", "SUY-LUAN-TUNG-BUOC-c07e")

# Each rater's keyboard answers per expression: accuracy, completeness, native alignment, overall.
PLAN_A = {
    TEXTS[0]: (5, 4, 5, 5),
    TEXTS[1]: (2, 2, 3, 2),
    TEXTS[2]: (4, 4, 4, 4),
    TEXTS[3]: (3, 3, 2, 3),
    TEXTS[4]: (4, 5, 4, 4),
    TEXTS[5]: (1, 1, 2, 1),
}
# B agrees on two expressions and differs on four: with 4 of 6 items shared, at least one shared item differs.
PLAN_B = {
    TEXTS[0]: (5, 4, 5, 5),
    TEXTS[1]: (3, 2, 3, 3),
    TEXTS[2]: (3, 3, 4, 3),
    TEXTS[3]: (3, 3, 2, 3),
    TEXTS[4]: (5, 5, 5, 5),
    TEXTS[5]: (0, 1, 1, 0),
}
DIMENSIONS = ("accuracy", "completeness", "native_alignment", "score")

ITEM_URL = re.compile(r"/evaluation/scoring/\d+/ratings/\d+/$")
QUEUE_URL = re.compile(r"/evaluation/scoring/\d+/queue/$")
INTERVAL_OR_DASH = re.compile(r"^(\[-?\d\.\d{3}, -?\d\.\d{3}\]|—)$")
KAPPA_OR_DASH = re.compile(r"^(-?\d\.\d{3}|—)$")
JUDGE_KEYS = {
    "strategy",
    "judge_model",
    "n",
    "mean",
    "human_mean",
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "kendall_tau",
    "kendall_tau_ci",
    "cohen_kappa_ci",
}


def _shot(page, name: str) -> None:
    page.screenshot(path=f"/tmp/score-{name}.png", full_page=True)


def _make_runs() -> tuple[Run, dict[str, Run]]:
    """A finished generation run of the six expressions and two finished judge runs on it, written directly."""
    rows = "\n".join(f'"{text}","{reference}"' for text, (reference, _) in CORPUS.items())
    expression_import(
        dataset_name="Thành ngữ chấm điểm", filename="cham.csv", content=f"expression,explanation\n{rows}\n".encode()
    )
    dataset = Dataset.objects.get(name="Thành ngữ chấm điểm")
    expressions = {e.text: e for e in dataset.expressions.all()}
    assert set(expressions) == set(CORPUS)

    generator = ModelConfig.objects.create(
        name=GENERATION_MODEL, provider=Provider.OPENAI, base_url="http://127.0.0.1:9/v1", model_id=GENERATION_MODEL
    )
    judge_model = ModelConfig.objects.create(
        name=JUDGE_MODEL, provider=Provider.OPENAI, base_url="http://127.0.0.1:9/v1", model_id=JUDGE_MODEL
    )
    prompt = PromptTemplate.objects.create(
        name="zero-shot",
        kind="generation",
        messages=[{"role": "user", "content": "{phrase}"}],
        content_hash="browser-scoring-gen",
    )
    generation = Run.objects.create(
        kind=RunKind.GENERATION,
        model=generator,
        prompt=prompt,
        dataset=dataset,
        strategy="zero-shot",
        status=RunStatus.DONE,
    )
    items = [
        RunItem.objects.create(
            run=generation, expression=expressions[text], status=ItemStatus.DONE, response=CORPUS[text][1]
        )
        for text in TEXTS
    ]
    judges = {}
    for strategy, spec in JUDGES.items():
        judge_prompt = PromptTemplate.objects.create(
            name=strategy,
            kind="judge",
            messages=[{"role": "user", "content": "{response}"}],
            content_hash=f"browser-scoring-{strategy}",
        )
        judge = Run.objects.create(
            kind=RunKind.JUDGE,
            model=judge_model,
            prompt=judge_prompt,
            dataset=dataset,
            source_run=generation,
            strategy=strategy,
            status=RunStatus.DONE,
            params={"temperature": 0.0, "seed": 0},
        )
        for item, score in zip(items, spec["scores"], strict=True):
            RunItem.objects.create(
                run=judge,
                expression_id=item.expression_id,
                source_item=item,
                status=ItemStatus.DONE,
                score=score,
                response=spec["reply"].format(score="?" if score is None else score),
            )
        judges[strategy] = judge
    return generation, judges


def _score_everything(page, plan: dict, *, who: str, pages_seen: list[str]) -> list[str]:
    """Score every item of the queue with the keyboard only; each submit must swap in place (no reload)."""
    heading = page.locator("#scoring-expression")
    progress = page.locator("#scoring-progress-bar")
    done = []
    total = None
    step = 0
    while True:
        expect(heading).to_be_visible()
        expect(page).to_have_url(ITEM_URL)
        text = heading.inner_text()
        assert text not in done, f"{who} was shown “{text}” twice"
        if total is None:
            total = int(progress.get_attribute("max"))
            assert total == 5  # 4 shared + 1 of the 2 left, for each of two raters
        expect(progress).to_have_attribute("value", str(step))
        # The model's explanation is there, and the model is not named.
        expect(page.locator(".scoring-candidate")).to_have_text(CORPUS[text][1])
        expect(page.locator(".scoring-reference")).to_have_text(CORPUS[text][0])
        pages_seen.append(page.content())
        # scoring.js marks the current dimension once the item has settled; keys before that would be lost.
        page.locator("#scoring-form [data-dimension].is-current").wait_for()
        # Every item starts on its first dimension, whatever had focus in the item before.
        expect(
            page.locator("#scoring-form [data-dimension].is-current"),
            f"{who}, item {step + 1}: the keyboard does not start on the first dimension",
        ).to_have_attribute("data-dimension", "accuracy")
        for dimension, value in zip(DIMENSIONS, plan[text], strict=True):
            page.keyboard.press(str(value))
            expect(page.locator(f'[data-dimension="{dimension}"] input[value="{value}"]')).to_be_checked()
        if step < 2:
            _shot(page, f"item-{who}-{step + 1}")

        # A full page load would drop this marker; an htmx swap keeps it.
        before = page.url
        marker = f"{who}-{step}"
        page.evaluate("marker => { window.__marker = marker; }", marker)
        page.keyboard.press("Enter")
        done.append(text)
        step += 1
        if step < total:
            expect(heading).not_to_have_text(text)
            expect(page.locator("#scoring-panel")).to_contain_text(f"Saved “{text}”.")
        else:
            expect(page.locator("#queue-title")).to_have_text(TASK_NAME)
            expect(page.locator("#scoring-panel")).to_contain_text(f"Saved “{text}”.")
        page.wait_for_function("before => location.href !== before", arg=before)
        assert page.evaluate("() => window.__marker") == marker, f"{who}: a full page load after step {step}"
        pages_seen.append(page.content())
        if step == total:
            break
    expect(page).to_have_url(QUEUE_URL)
    expect(page.locator("#scoring-progress-bar")).to_have_attribute("value", str(total))
    expect(page.locator("#scoring-panel")).to_contain_text("You have scored every item of this task.")
    _shot(page, f"queue-finished-{who}")
    return done


def _assert_blind(pages: list[str], *, who: str) -> None:
    forbidden = (
        *JUDGE_MARKERS,
        GENERATION_MODEL,
        JUDGE_MODEL,
        "Điểm tổng thể:",
        "Điểm cuối cùng:",
        "Judge score",
        "data-judge",
    )
    for html in pages:
        for word in forbidden:
            assert word not in html, f"{who} saw “{word}”"


def test_it_lets_two_raters_score_and_a_researcher_read_the_report(context_for, live_server, eager):
    base = live_server.url
    generation, judges = _make_runs()
    annotator_a = make_user("annotator_a", ANNOTATOR)
    annotator_b = make_user("annotator_b", ANNOTATOR)
    researcher = make_user("researcher", RESEARCHER)

    # --- The researcher creates the scoring task from the page --------------------------
    rp = context_for(researcher)
    rp.goto(base + "/evaluation/scoring/new/")
    expect(rp.get_by_role("heading", name="New scoring task")).to_be_visible()
    rp.get_by_label("Name", exact=True).fill(TASK_NAME)
    rp.get_by_label("Generation run", exact=True).select_option(value=str(generation.pk))
    rp.get_by_label("Raters", exact=True).select_option(label=["annotator_a", "annotator_b"])
    rp.get_by_label("Number of items", exact=True).fill("6")
    rp.get_by_label("Shared items", exact=True).fill("4")
    rp.get_by_label("Seed", exact=True).fill("11")
    _shot(rp, "task-new")
    rp.get_by_role("button", name="Create the task").click()

    expect(rp.get_by_role("heading", name=TASK_NAME, exact=True)).to_be_visible()
    expect(rp.locator("main")).to_contain_text(f"Scoring task “{TASK_NAME}” created.")
    task = ScoringTask.objects.get(name=TASK_NAME)
    expect(rp).to_have_url(f"{base}/evaluation/scoring/{task.pk}/")
    assert (task.run_id, task.n_items, task.n_shared, task.seed) == (generation.pk, 6, 4, 11)
    assert set(task.raters.values_list("username", flat=True)) == {"annotator_a", "annotator_b"}
    for name in ("annotator_a", "annotator_b"):
        expect(rp.locator(f'tr[data-rater="{name}"] td').first).to_have_text("0/5")
    _shot(rp, "task-detail")

    # --- Rater A scores every item with the keyboard ---------------------------------------
    ap = context_for(annotator_a)
    a_pages = [ap.content()]
    ap.get_by_role("navigation", name="Main").get_by_role("link", name="Scoring").click()
    expect(ap.get_by_role("heading", name="Your scoring tasks")).to_be_visible()
    a_pages.append(ap.content())
    _shot(ap, "mine-a")
    ap.get_by_role("link", name=TASK_NAME).click()
    a_done = _score_everything(ap, PLAN_A, who="a", pages_seen=a_pages)

    # --- Rater B scores their items, differently from A on some shared ones ---------------------
    bp = context_for(annotator_b)
    b_pages = [bp.content()]
    bp.get_by_role("navigation", name="Main").get_by_role("link", name="Scoring").click()
    expect(bp.get_by_role("heading", name="Your scoring tasks")).to_be_visible()
    b_pages.append(bp.content())
    bp.get_by_role("link", name=TASK_NAME).click()
    b_done = _score_everything(bp, PLAN_B, who="b", pages_seen=b_pages)

    # What each rater saw: never a judge reply, a judge score, the models, or the other rater's scores.
    _assert_blind(a_pages, who="annotator A")
    _assert_blind(b_pages, who="annotator B")

    shared = set(a_done) & set(b_done)
    assert len(shared) == 4 and len(set(a_done) | set(b_done)) == 6
    ratings = list(HumanRating.objects.filter(task=task).select_related("item__expression", "rater"))
    assert len(ratings) == 10 and all(r.status == RatingStatus.SUBMITTED for r in ratings)
    for rating in ratings:
        plan = PLAN_A if rating.rater.username == "annotator_a" else PLAN_B
        assert tuple(getattr(rating, d) for d in DIMENSIONS) == plan[rating.item.expression.text]
    assert any(PLAN_A[text][3] != PLAN_B[text][3] for text in shared), "no shared item where A and B differ"

    # --- The researcher reads the report --------------------------------------------------------
    rp.goto(f"{base}/evaluation/scoring/{task.pk}/")
    for name in ("annotator_a", "annotator_b"):
        expect(rp.locator(f'tr[data-rater="{name}"] td').first).to_have_text("5/5")
    rp.goto(f"{base}/evaluation/runs/{generation.pk}/")
    rp.get_by_test_id("human-report-link").click()
    expect(rp).to_have_url(f"{base}/evaluation/runs/{generation.pk}/human-report/")
    expect(rp.get_by_role("heading", name=f"Judges and humans · run #{generation.pk}", level=1)).to_be_visible()
    table1 = rp.get_by_test_id("table1")
    expect(table1.locator("tbody tr")).to_have_count(3)
    human_row = table1.locator('tr[data-row="human"]')
    expect(human_row.locator("th")).to_contain_text("Human baseline")
    expect(rp.get_by_test_id("n-ratings")).to_have_text("10")
    rows = [human_row]
    for strategy, judge in judges.items():
        row = table1.locator(f'tr[data-row="judge"][data-run="{judge.pk}"]')
        expect(row.locator("th")).to_contain_text(strategy)
        expect(row.locator("td").nth(0)).to_have_text(JUDGE_MODEL)
        rows.append(row)
    for row in rows:
        cells = row.locator("td")
        expect(cells.nth(2)).to_have_text(re.compile(r"^\d\.\d{2}$"))  # mean
        expect(cells.nth(3)).to_have_text(KAPPA_OR_DASH)  # kappa
        expect(cells.nth(4)).to_have_text(INTERVAL_OR_DASH)  # 95% interval
    _shot(rp, "report")

    with rp.expect_download() as download_info:
        rp.get_by_role("link", name="Download JSON").click()
    download = download_info.value
    assert download.suggested_filename == f"run-{generation.pk}-human-report.json"
    report = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    human = report["human"]
    assert {"n_ratings", "mean", "inter_rater"} <= set(human)
    assert human["n_ratings"] == 10
    assert human["mean"] == pytest.approx(sum(r.score for r in ratings) / 10)
    assert {
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
        "kendall_tau",
        "kendall_tau_ci",
        "cohen_kappa_ci",
    } <= set(human["inter_rater"])
    assert human["inter_rater"]["n"] == 4  # one pair of raters on each shared item
    assert set(report["judges"]) == {str(judge.pk) for judge in judges.values()}
    for strategy, judge in judges.items():
        figures = report["judges"][str(judge.pk)]
        assert set(figures) >= JUDGE_KEYS, JUDGE_KEYS - set(figures)
        assert figures["strategy"] == strategy
        assert figures["judge_model"] == JUDGE_MODEL
        # Pairing rule: every submitted rating of an item the judge scored is one pair (a shared item: one per rater).
        judge_scores = {TEXTS[i]: s for i, s in enumerate(JUDGES[strategy]["scores"])}
        pairs = [
            (judge_scores[r.item.expression.text], r.score)
            for r in ratings
            if judge_scores[r.item.expression.text] is not None
        ]
        assert figures["n"] == len(pairs)
        assert figures["mean"] == pytest.approx(sum(p[0] for p in pairs) / len(pairs))
        assert figures["human_mean"] == pytest.approx(sum(p[1] for p in pairs) / len(pairs))
        for key in ("kendall_tau_ci", "cohen_kappa_ci"):
            assert figures[key] is None or (len(figures[key]) == 2 and figures[key][0] <= figures[key][1])

    # --- A rater is refused the report ---------------------------------------------------------
    for path in (
        f"/evaluation/runs/{generation.pk}/human-report/",
        f"/evaluation/runs/{generation.pk}/human-report/?format=json",
    ):
        response = ap.goto(base + path)
        assert response.status == 403, path
        assert all(marker not in ap.content() for marker in (*JUDGE_MARKERS, JUDGE_MODEL, GENERATION_MODEL))
