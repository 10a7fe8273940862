"""A demo walked through by every role, and the pages each role reaches from the home page.

``build_demo_world`` starts from ``manage.py seed_demo`` (the demo accounts, dataset, suggestions
and round) and adds what a newcomer makes by clicking through ``make demo``: both annotators'
answers (some fast), the round locked with one disagreement settled, a second round still open,
generation and judge runs (one of them limited to a single item), a human scoring task, an artwork
pipeline run of one artwork with one sample, and a live artwork study that one participant (the
newcomer) finished. Runs and the pipeline run are written straight to the tables (tests/evaluation/factories.py,
tests/artworks/report_factories.py): their pages only read them.

``crawl`` follows every link of a signed-in role from the home page, as a person walking the site
would, and keeps each page's HTML; ``visible_text`` gives the text nodes a reader sees.
"""

import io
import random
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from annotation.models import AnnotationRound, Assignment, Dataset, ItemStatus, RoundItem, Theme
from annotation.services.review import adjudication_resolve, assignment_submit, suggested_codes
from annotation.services.rounds import round_create, round_lock
from artworks.models import ArtworkPipelineRun
from evaluation.models import HumanRating, RatingStatus, RunItem, RunStatus
from llm.models import ModelConfig
from study.models import StudyStatus
from tests.artworks.report_factories import make_pipeline_run
from tests.evaluation.factories import make_generation_run, make_judge_run, make_scoring_task
from tests.study.factories import make_study, package_dict
from tests.study.test_flow import take

ROLES = ("researcher", "annotator_a", "adjudicator")
# The people's names of the demo: user data, shown as they are.
USERNAMES = frozenset({"annotator_a", "annotator_b", "adjudicator", "researcher", "admin"})

# Links a reader follows; not sign-out, downloads, figures, the admin, the API, forms that start
# something, a participant's pages (their own session) or the language switch.
_SKIP = re.compile(
    r"^/(accounts/logout|admin|api|i18n|s/)|/(export|figure|images?)/|/export\.|\.(csv|json|svg|pdf|png|zip)$"
    r"|[?&]format=|/(new|import|draft|skip|cancel|resume|rerun|reparse|lock|reopen|freeze|probe|prepare|status"
    r"|preview|quality/settings|quality/controls|quality/recalibrate)/"
)


@dataclass
class DemoWorld:
    round: AnnotationRound
    open_round: AnnotationRound
    users: dict


def _answer_all(round_: AnnotationRound, *, rng: random.Random, share: float = 1.0) -> None:
    themes = list(Theme.objects.values_list("code", flat=True))
    assignments = list(Assignment.objects.filter(item__round=round_).select_related("item", "annotator").order_by("id"))
    for number, assignment in enumerate(assignments[: int(len(assignments) * share)]):
        suggested = suggested_codes(assignment.item)
        assignment_submit(
            assignment=assignment,
            user=assignment.annotator,
            # Two thirds agree on the theme: windows, kappas and disagreements to settle.
            theme=themes[(assignment.item.expression_id + (number % 3 == 0)) % len(themes)],
            trait_decisions={code: rng.choice(["accept", "reject"]) for code in suggested},
            suggested=suggested,
            # Every seventh answer in under two seconds: the Quality tab lists fast answers.
            seconds=1.2 if number % 7 == 0 else 14.0,
        )


def _evaluation(dataset: Dataset, raters: list[User], *, rng: random.Random) -> None:
    builtin = ModelConfig.objects.filter(builtin=True).first()
    generation = make_generation_run(dataset, model=builtin)
    for strategy in ("aspect", "zero-shot"):
        make_judge_run(generation, {i: rng.choice([1, 2, 3, 4, 5, None]) for i in range(12)}, strategy=strategy)
    # A newcomer's first run: the built-in model on one item only.
    single = make_generation_run(dataset, model=builtin, status=RunStatus.DONE)
    RunItem.objects.filter(run=single).exclude(number=1).delete()
    type(single).objects.filter(pk=single.pk).update(limit=1)
    task = make_scoring_task(generation, raters, name="Demo scoring", n_items=6, n_shared=2)
    for rating in HumanRating.objects.filter(task=task).order_by("id")[:5]:
        HumanRating.objects.filter(pk=rating.pk).update(
            score=rng.randint(0, 5),
            accuracy=3,
            completeness=3,
            native_alignment=3,
            status=RatingStatus.SUBMITTED,
            submitted_at=timezone.now(),
        )


def _artworks() -> ArtworkPipelineRun:
    run = make_pipeline_run(per_culture=2, name="Demo artworks (pipeline)")
    ArtworkPipelineRun.objects.filter(pk=run.pk).update(limit=1, samples=1)
    return run


def _study() -> None:
    # The newcomer takes the study once: one participant, too few for any interval.
    study = make_study(package_dict(slug="demo-artworks"), status=StudyStatus.LIVE)
    take(study, "DEMO0001", group="american", client=Client(), seed=1)


def build_demo_world() -> DemoWorld:
    """The demo after a newcomer's walk through every role (see the module's docstring)."""
    call_command("seed_demo", "--no-summary", stdout=io.StringIO(), stderr=io.StringIO())
    users = {user.username: user for user in User.objects.filter(username__in=USERNAMES)}
    rng = random.Random(2026)
    round_ = AnnotationRound.objects.get(name="Demo round")
    _answer_all(round_, rng=rng)
    round_lock(round=round_, user=users["researcher"])
    disputed = RoundItem.objects.filter(round=round_, status=ItemStatus.NEEDS_ADJUDICATION).order_by("id").first()
    if disputed is not None:
        adjudication_resolve(
            item=disputed,
            user=users["adjudicator"],
            traits=[],
            theme=Theme.objects.order_by("number").first().code,
            revision=disputed.revision,
        )
    dataset = round_.dataset
    open_round = round_create(
        name="Second round",
        dataset=dataset,
        annotators=[users["annotator_a"], users["annotator_b"]],
        user=users["researcher"],
        suggestion_set=round_.suggestion_set,
        seed=7,
    )
    _answer_all(open_round, rng=rng, share=0.3)
    _evaluation(dataset, [users["annotator_a"], users["annotator_b"]], rng=rng)
    _artworks()
    _study()
    return DemoWorld(round=round_, open_round=open_round, users=users)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href and not href.startswith(("#", "mailto:", "javascript:")):
                self.hrefs.append(href)


def _pattern(path: str) -> str:
    return re.sub(r"\d+", "N", path)


def crawl(client: Client, *, also: tuple[str, ...] = (), per_pattern: int = 4, limit: int = 400) -> dict[str, str]:
    """Every page the signed-in ``client`` reaches by links from the home page (and from the pages
    ``also`` names, which no link leads to yet): {path: HTML}.

    At most ``per_pattern`` pages of one URL shape (ids replaced), so a list of forty items costs
    four item pages. Only pages that answer 200 with HTML are kept.
    """
    pages: dict[str, str] = {}
    seen: set[str] = set()
    shapes: dict[str, int] = {}
    queue = ["/", *also]
    while queue and len(seen) < limit:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        shape = _pattern(path)
        if shapes.get(shape, 0) >= per_pattern:
            continue
        shapes[shape] = shapes.get(shape, 0) + 1
        # A queue's link redirects to its next item: the reader lands there.
        response = client.get(path, follow=True)
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        if response.redirect_chain:
            path = response.redirect_chain[-1][0]
            seen.add(path)
        html = response.content.decode()
        pages[path] = html
        parser = _Links()
        parser.feed(html)
        for href in parser.hrefs:
            parts = urlsplit(urljoin("http://testserver" + path, href))
            if parts.netloc != "testserver":
                continue
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            if not _SKIP.search(target) and target not in seen:
                queue.append(target)
    return pages


# Machine-readable or verbatim: a code sample, a reply or a key shown as it is.
_VERBATIM = frozenset({"code", "pre", "kbd", "samp", "script", "style", "template", "textarea", "svg"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if data.strip() and not _VERBATIM.intersection(self.stack):
            self.texts.append(" ".join(data.split()))


def visible_text(html: str) -> list[str]:
    """The page's text nodes outside code, pre, kbd, samp, scripts and styles; attributes are not text."""
    parser = _Text()
    parser.feed(html)
    return parser.texts


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client
