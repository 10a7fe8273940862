"""Every URL pattern of the site times every persona, with the expected answer declared in one table.

The patterns are walked from the URL conf, so a new URL without a row in ``TABLE``
(or a prefix rule in ``PREFIX_RULES``) fails ``test_it_declares_every_url_pattern``
with its name. Each (pattern, persona) is its own test for GET, and for POST where
the endpoint takes writes; a refused POST must write nothing.

The world (one object of each kind) is built once per module inside a transaction
that is rolled back at the end; each test runs in a savepoint of it.
"""

import copy
from dataclasses import dataclass, field

import pytest
from django.apps import apps
from django.db import connection, transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

from annotation.models import Dataset, ItemStatus
from annotation.services import (
    assignment_submit,
    expression_import,
    import_job_create,
    round_create,
    round_lock,
    version_freeze,
)
from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER
from evaluation.services.scoring import scoring_task_create
from study.services.participants import prolific_id_for
from tests.artworks.report_factories import make_pipeline_run
from tests.conftest import make_user
from tests.evaluation.factories import make_generation_run, make_judge_run, numbered_dataset
from tests.study.factories import make_study

# --- Personas and expected answers -------------------------------------------------

PERSONAS = (
    "anonymous",
    "no_role",
    "annotator_a",
    "annotator_b",
    "annotator_adjudicator",
    "adjudicator",
    "researcher",
    "participant",
    "other_participant",
)
SIGNED_OUT = ("anonymous", "participant", "other_participant")
ROLES = ("annotator_a", "annotator_b", "annotator_adjudicator", "adjudicator", "researcher")
ANNOTATORS = ("annotator_a", "annotator_b", "annotator_adjudicator")
# Symbolic answers: a redirect to the sign-in page, to the admin's sign-in page, or anywhere.
LOGIN, ADMIN_LOGIN, REDIRECT = "redirect-login", "redirect-admin-login", "redirect"


def answers(default, **overrides) -> dict:
    unknown = set(overrides) - set(PERSONAS)
    assert not unknown, f"unknown personas {unknown}"
    return {persona: overrides.get(persona, default) for persona in PERSONAS}


def page(ok=200, roles=ROLES, **overrides) -> dict:
    """A signed-in page: the sign-in page for visitors, 403 without one of ``roles``."""
    base = {p: LOGIN for p in SIGNED_OUT} | {p: 403 for p in ("no_role", *ROLES)} | {p: ok for p in roles}
    return base | overrides


def api(ok=200, roles=ROLES, **overrides) -> dict:
    """An API endpoint: 401 for visitors, 403 without one of ``roles``."""
    base = {p: 401 for p in SIGNED_OUT} | {p: 403 for p in ("no_role", *ROLES)} | {p: ok for p in roles}
    return base | overrides


def researcher_page(ok=200, **overrides) -> dict:
    return page(ok, roles=("researcher",), **overrides)


def researcher_api(ok=200, **overrides) -> dict:
    return api(ok, roles=("researcher",), **overrides)


@dataclass
class Row:
    """Expected answers of one URL pattern. ``kwargs`` fills the pattern from the world."""

    get: dict | None
    post: dict | None = None
    kwargs: object = field(default=lambda w: {})
    query: str = ""


def k(**names):
    """URL kwargs read from the world by attribute name: k(pk="dataset")."""
    return lambda w: {key: getattr(w, attr) for key, attr in names.items()}


# Participant flow: the entry link without Prolific parameters is a clear 400 page; the run page
# answers each session with its own page and anyone else with the "no session" page.
NO_SESSION = 400
# A page that takes only POST answers GET with 405 before asking who calls; that tells nothing.
POST_ONLY = answers(405)

TABLE: dict[str, Row] = {
    # --- Site ------------------------------------------------------------------------
    "home": Row(get=answers(200, anonymous=LOGIN, participant=LOGIN, other_participant=LOGIN)),
    # To the static icon, for everyone: browsers ask for it on their own.
    "favicon": Row(get=answers(REDIRECT)),
    "api-schema": Row(get=api()),
    # A page for people: signed out, the sign-in page and back; the schema keeps its 401 for clients.
    "api-docs": Row(get=api(anonymous=LOGIN, participant=LOGIN, other_participant=LOGIN)),
    # --- Corpus ------------------------------------------------------------------------
    "annotation:dataset_list": Row(get=page()),
    "annotation:dataset_detail": Row(get=page(), kwargs=k(pk="dataset_pk")),
    "annotation:dataset_export": Row(get=page(), kwargs=k(pk="dataset_pk"), query="?format=csv"),
    "annotation:import_start": Row(get=researcher_page(), post=researcher_page(200)),
    "annotation:import_detail": Row(get=researcher_page(), kwargs=k(pk="import_pk")),
    "annotation:import_confirm": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="import_pk")),
    "annotation:import_cancel": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="import_pk")),
    "annotation:import_retarget": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="import_pk")),
    # --- Rounds and versions -------------------------------------------------------------
    "annotation:round_list": Row(get=page()),
    "annotation:round_new": Row(get=researcher_page(), post=researcher_page(400)),
    "annotation:round_detail": Row(
        get=page(roles=("annotator_adjudicator", "adjudicator", "researcher")), kwargs=k(pk="round_pk")
    ),
    # Posted without "I understand" ticked: the round page asks for it (400) and nothing is locked.
    "annotation:round_lock": Row(get=POST_ONLY, post=researcher_page(400), kwargs=k(pk="round_pk")),
    "annotation:round_reopen": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="round_pk")),
    "annotation:round_freeze": Row(get=POST_ONLY, post=researcher_page(400), kwargs=k(pk="round_pk")),
    "annotation:suggestion_import": Row(get=researcher_page(), post=researcher_page(200)),
    "annotation:version_list": Row(get=page()),
    "annotation:version_detail": Row(get=page(), kwargs=k(pk="version_pk")),
    "annotation:version_export": Row(get=page(), kwargs=k(pk="version_pk"), query="?format=csv"),
    "annotation:version_export_hf": Row(get=researcher_page(), kwargs=k(pk="version_pk")),
    # The open round's stats: whoever annotates it waits for the lock (the blindness rule).
    "annotation:round_stats": Row(get=page(roles=("adjudicator", "researcher")), kwargs=k(pk="round_pk")),
    # The Quality tab follows the statistics (blind annotators wait); its tools are the researcher's.
    "annotation:round_quality": Row(get=page(roles=("adjudicator", "researcher")), kwargs=k(pk="round_pk")),
    "annotation:round_quality_figure": Row(
        get=page(roles=("adjudicator", "researcher")),
        kwargs=lambda w: {"pk": w.round_pk, "name": "drift-final", "fmt": "svg"},
    ),
    "annotation:round_quality_settings": Row(get=POST_ONLY, post=researcher_page(400), kwargs=k(pk="round_pk")),
    "annotation:round_controls_add": Row(get=POST_ONLY, post=researcher_page(400), kwargs=k(pk="round_pk")),
    "annotation:round_recalibrate": Row(get=POST_ONLY, post=researcher_page(400), kwargs=k(pk="round_pk")),
    "annotation:round_stats_figure": Row(
        get=page(roles=("adjudicator", "researcher")),
        kwargs=lambda w: {"pk": w.round_pk, "name": "themes", "fmt": "svg"},
    ),
    # --- Review: annotator A's item; B is in the round but not on this assignment -----------
    "annotation:review_queue": Row(get=page(REDIRECT, roles=ANNOTATORS), kwargs=k(round_pk="round_pk")),
    "annotation:review_item": Row(
        get=page(roles=("annotator_a",), annotator_b=404, annotator_adjudicator=404),
        post=page(200, roles=("annotator_a",), annotator_b=404, annotator_adjudicator=404),
        kwargs=k(round_pk="round_pk", assignment_pk="assignment_pk"),
    ),
    "annotation:review_draft": Row(
        get=POST_ONLY,
        post=page(200, roles=("annotator_a",), annotator_b=404, annotator_adjudicator=404),
        kwargs=k(round_pk="round_pk", assignment_pk="assignment_pk"),
    ),
    "annotation:review_skip": Row(
        get=POST_ONLY,
        post=page(REDIRECT, roles=("annotator_a",), annotator_b=404, annotator_adjudicator=404),
        kwargs=k(round_pk="round_pk", assignment_pk="assignment_pk"),
    ),
    "annotation:review_outcomes": Row(get=page(roles=ANNOTATORS), kwargs=k(round_pk="round_pk")),
    # --- Adjudication and history of an item of A and the annotator-adjudicator ------------
    "annotation:adjudication_queue": Row(
        get=page(roles=("annotator_adjudicator", "adjudicator")), kwargs=k(round_pk="round_pk")
    ),
    "annotation:adjudication_item": Row(
        get=page(roles=("annotator_adjudicator", "adjudicator")),
        post=page(400, roles=("annotator_adjudicator", "adjudicator")),
        kwargs=k(round_pk="round_pk", item_pk="item_pk"),
    ),
    "annotation:item_detail": Row(get=page(annotator_b=404), kwargs=k(round_pk="round_pk", item_pk="item_pk")),
    # --- Annotation API -----------------------------------------------------------------
    "api:api-root": Row(get=api()),
    # The API token page: any staff role (someone without a role has no use for the API).
    "core:api_token": Row(get=page(), post=page(400)),
    "api:import": Row(get=researcher_api(405), post=researcher_api(415)),
    "api:token": Row(get=answers(405), post=answers(400)),
    "api:round_list": Row(get=api(), post=researcher_api(400)),
    "api:round_detail": Row(get=api(annotator_b=200), kwargs=k(pk="round_pk")),
    "api:round_lock": Row(get=researcher_api(405), post=researcher_api(400), kwargs=k(pk="round_pk")),
    "api:round_stats": Row(get=api(roles=("adjudicator", "researcher")), kwargs=k(pk="round_pk")),
    "api:round_quality": Row(get=api(roles=("adjudicator", "researcher")), kwargs=k(pk="round_pk")),
    "api:assignment_list": Row(get=api(roles=ANNOTATORS), kwargs=k(round_pk="round_pk")),
    "api:assignment_detail": Row(get=api(404, roles=ANNOTATORS, annotator_a=200), kwargs=k(pk="assignment_pk")),
    "api:assignment_submit": Row(
        get=api(405, roles=ANNOTATORS), post=api(404, roles=ANNOTATORS, annotator_a=400), kwargs=k(pk="assignment_pk")
    ),
    "api:adjudication_list": Row(
        get=api(409, roles=("annotator_adjudicator", "adjudicator", "researcher")), kwargs=k(round_pk="round_pk")
    ),
    "api:adjudication_resolve": Row(
        get=api(405, roles=("annotator_adjudicator", "adjudicator")),
        post=api(400, roles=("annotator_adjudicator", "adjudicator")),
        kwargs=k(pk="item_pk"),
    ),
    "api:item_history": Row(get=api(annotator_b=404), kwargs=k(pk="item_pk")),
    "api:suggestion_import": Row(get=researcher_api(405), post=researcher_api(415)),
    "api:version_list": Row(get=api()),
    "api:version_detail": Row(get=api(), kwargs=k(pk="version_pk")),
    "api:version_export": Row(get=api(), kwargs=k(pk="version_pk")),
    "api:dataset-list": Row(get=api(), post=researcher_api(400)),
    "api:dataset-detail": Row(get=api(), kwargs=k(pk="dataset_pk")),
    "api:dataset-export": Row(get=api(), kwargs=k(pk="dataset_pk")),
    "api:expression-list": Row(get=api(), post=researcher_api(400)),
    "api:expression-detail": Row(get=api(), kwargs=k(pk="expression_pk")),
    "api:trait-list": Row(get=api()),
    "api:trait-detail": Row(get=api(), kwargs=lambda w: {"code": "literal"}),
    "api:theme-list": Row(get=api()),
    "api:theme-detail": Row(get=api(), kwargs=lambda w: {"code": "love"}),
    # --- Evaluation pages (researchers), human scoring (raters A and B) ------------------------
    "llm:model_list": Row(get=researcher_page()),
    "llm:model_new": Row(get=researcher_page(), post=researcher_page(200)),
    "llm:model_probe": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="model_pk")),
    "evaluation:prompt_list": Row(get=researcher_page()),
    "evaluation:prompt_new": Row(get=researcher_page(), post=researcher_page(200)),
    "evaluation:prompt_detail": Row(get=researcher_page(), kwargs=k(pk="prompt_pk")),
    "evaluation:run_list": Row(get=researcher_page()),
    # Posted without a file: the form says so (400) and nothing is imported.
    "evaluation:run_import": Row(get=researcher_page(), post=researcher_page(400)),
    "evaluation:run_new": Row(
        get=researcher_page(), post=researcher_page(400), kwargs=lambda w: {"kind": "generation"}
    ),
    "evaluation:run_detail": Row(get=researcher_page(), kwargs=k(pk="run_pk")),
    "evaluation:run_progress": Row(get=researcher_page(), kwargs=k(pk="run_pk")),
    "evaluation:run_cancel": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="run_pk")),
    "evaluation:run_resume": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="run_pk")),
    "evaluation:run_rerun": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="run_pk")),
    "evaluation:run_reparse": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="run_pk")),
    "evaluation:item_detail": Row(get=researcher_page(), kwargs=k(run_pk="run_pk", pk="run_item_pk")),
    "evaluation:results": Row(get=researcher_page()),
    "evaluation:version_tasks": Row(get=researcher_page(), kwargs=k(pk="version_pk"), query="?format=lm-eval"),
    "evaluation:results_figure": Row(get=researcher_page(), kwargs=lambda w: {"name": "theme", "fmt": "svg"}),
    "evaluation:scoring_task_list": Row(get=researcher_page()),
    "evaluation:scoring_task_new": Row(get=researcher_page(), post=researcher_page(400)),
    "evaluation:scoring_task_detail": Row(get=researcher_page(), kwargs=k(pk="task_pk")),
    "evaluation:scoring_mine": Row(get=page(roles=ANNOTATORS)),
    "evaluation:scoring_queue": Row(
        get=page(REDIRECT, roles=("annotator_a", "annotator_b"), annotator_adjudicator=404), kwargs=k(task_pk="task_pk")
    ),
    "evaluation:scoring_item": Row(
        get=page(roles=("annotator_a",), annotator_b=404, annotator_adjudicator=404),
        post=page(400, roles=("annotator_a",), annotator_b=404, annotator_adjudicator=404),
        kwargs=k(task_pk="task_pk", pk="rating_pk"),
    ),
    "evaluation:scoring_draft": Row(
        get=POST_ONLY,
        post=page(200, roles=("annotator_a",), annotator_b=404, annotator_adjudicator=404),
        kwargs=k(task_pk="task_pk", pk="rating_pk"),
    ),
    "evaluation:human_report": Row(get=researcher_page(), kwargs=k(pk="run_pk")),
    "evaluation:human_report_repeat": Row(get=POST_ONLY, post=researcher_page(400), kwargs=k(pk="run_pk")),
    "evaluation:human_report_figure": Row(
        get=researcher_page(), kwargs=lambda w: {"pk": w.run_pk, "name": "table1", "fmt": "pdf"}
    ),
    "evaluation:run_bias": Row(get=researcher_page(), kwargs=k(pk="judge_run_pk")),
    "evaluation:run_bias_paraphrase": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(pk="judge_run_pk")),
    "evaluation:pairwise_new": Row(get=researcher_page(), post=researcher_page(400)),
    "artworks:run_list": Row(get=researcher_page(), post=researcher_page(400)),
    "artworks:run_detail": Row(get=researcher_page(), kwargs=k(pk="artwork_run_pk")),
    "artworks:run_artwork": Row(
        get=researcher_page(), kwargs=k(pk="artwork_run_pk", artwork_pk="collection_artwork_pk")
    ),
    "artworks:report": Row(get=researcher_page(), kwargs=k(pk="artwork_run_pk")),
    "artworks:report_figure": Row(
        get=researcher_page(), kwargs=lambda w: {"pk": w.artwork_run_pk, "name": "table1", "fmt": "svg"}
    ),
    "artworks:export": Row(get=POST_ONLY, post=researcher_page(200), kwargs=k(pk="artwork_run_pk")),
    "artworks:collection_list": Row(get=researcher_page()),
    # The pipeline's addresses before /artworks/: 308 to the new one for anyone (the new one asks
    # who calls), with the method kept so a script's POST arrives as a POST.
    "artworks-moved:moved_runs": Row(
        get=answers(308), post=answers(308), kwargs=lambda w: {"rest": f"{w.artwork_run_pk}/"}
    ),
    "artworks-moved:moved_collections": Row(get=answers(308), post=answers(308), kwargs=lambda w: {"rest": ""}),
    "artworks-moved:moved_api_runs": Row(
        get=answers(308), post=answers(308), kwargs=lambda w: {"rest": f"{w.artwork_run_pk}/cancel/"}
    ),
    "artworks-moved:moved_api_collections": Row(get=answers(308), post=answers(308), kwargs=lambda w: {"rest": ""}),
    "artworks:collection_import": Row(get=researcher_page(), post=researcher_page(200)),
    "artworks:collection_detail": Row(get=researcher_page(), kwargs=k(pk="collection_pk")),
    "artworks:artwork_detail": Row(
        get=researcher_page(),
        post=researcher_page(REDIRECT),
        kwargs=k(pk="collection_pk", artwork_pk="collection_artwork_pk"),
    ),
    "artworks:artwork_image": Row(
        get=researcher_page(), kwargs=k(pk="collection_pk", artwork_pk="collection_artwork_pk")
    ),
    # --- Evaluation API ---------------------------------------------------------------------
    "llm-api:model_list": Row(get=researcher_api(), post=researcher_api(400)),
    "evaluation-api:prompt_list": Row(get=researcher_api(), post=researcher_api(400)),
    "evaluation-api:run_list": Row(get=researcher_api(), post=researcher_api(400)),
    "evaluation-api:run_import": Row(get=researcher_api(405), post=researcher_api(415)),
    "evaluation-api:run_detail": Row(get=researcher_api(), kwargs=k(pk="run_pk")),
    "evaluation-api:run_cancel": Row(get=researcher_api(405), post=researcher_api(400), kwargs=k(pk="run_pk")),
    "evaluation-api:run_resume": Row(get=researcher_api(405), post=researcher_api(400), kwargs=k(pk="run_pk")),
    "evaluation-api:item_list": Row(get=researcher_api(), kwargs=k(pk="run_pk")),
    "evaluation-api:item_detail": Row(get=researcher_api(), kwargs=k(run_pk="run_pk", pk="run_item_pk")),
    "evaluation-api:run_report": Row(get=researcher_api(), kwargs=k(pk="run_pk")),
    "evaluation-api:results_table": Row(get=researcher_api(), kwargs=lambda w: {"table": "theme"}),
    "evaluation-api:scoring_task_list": Row(get=researcher_api(), post=researcher_api(400)),
    "evaluation-api:scoring_task_detail": Row(get=researcher_api(), kwargs=k(pk="task_pk")),
    "evaluation-api:scoring_my_ratings": Row(
        get=api(roles=("annotator_a", "annotator_b"), annotator_adjudicator=404), kwargs=k(pk="task_pk")
    ),
    "evaluation-api:scoring_rating": Row(
        get=api(404, roles=ANNOTATORS, annotator_a=200),
        post=api(404, roles=ANNOTATORS, annotator_a=400),
        kwargs=k(pk="rating_pk"),
    ),
    "evaluation-api:human_report": Row(get=researcher_api(), kwargs=k(pk="run_pk")),
    "evaluation-api:run_bias": Row(get=researcher_api(), kwargs=k(pk="judge_run_pk")),
    "artworks-api:collection_list": Row(get=researcher_api()),
    "artworks-api:collection_detail": Row(get=researcher_api(), kwargs=k(pk="collection_pk")),
    "artworks-api:run_list": Row(get=researcher_api(), post=researcher_api(400)),
    "artworks-api:run_detail": Row(get=researcher_api(), kwargs=k(pk="artwork_run_pk")),
    "artworks-api:run_cancel": Row(get=researcher_api(405), post=researcher_api(400), kwargs=k(pk="artwork_run_pk")),
    "artworks-api:run_resume": Row(get=researcher_api(405), post=researcher_api(400), kwargs=k(pk="artwork_run_pk")),
    "artworks-api:report": Row(get=researcher_api(), kwargs=k(pk="artwork_run_pk")),
    # --- Study: participants -------------------------------------------------------------------
    "study:entry": Row(get=answers(400), kwargs=k(slug="study_slug")),
    "study:run": Row(
        get=answers(NO_SESSION, participant=200, other_participant=200),
        post=answers(NO_SESSION, participant=REDIRECT, other_participant=REDIRECT),
        kwargs=k(slug="study_slug"),
    ),
    "study:image": Row(get=answers(200), kwargs=k(slug="study_slug", key="study_image_key")),
    # The local done page exists only in development (PROLIFIC_COMPLETE_LOCAL); tests run without it.
    "study:done": Row(get=answers(404), kwargs=k(slug="study_slug"), query="?cc=C0MPL3TE"),
    # --- Study: researchers ----------------------------------------------------------------------
    "study:list": Row(get=researcher_page()),
    "study:import": Row(get=researcher_page(), post=researcher_page(400)),
    "study:detail": Row(get=researcher_page(), kwargs=k(slug="study_slug")),
    "study:transition": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "study:preview": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "study:terms": Row(get=researcher_page(), post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "study:prepare": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "study:results": Row(get=researcher_page(), kwargs=k(slug="study_slug")),
    "study:results_figure": Row(
        get=researcher_page(), kwargs=lambda w: {"slug": w.study_slug, "name": "preferences", "fmt": "pdf"}
    ),
    "study:export": Row(get=researcher_page(), kwargs=k(slug="study_slug")),
    "study_api:study-list": Row(get=researcher_api()),
    # Multipart only: the empty JSON body of the test is refused as such.
    # GET reads it as the study "import", a reserved slug: no such study.
    "study_api:study-import": Row(get=researcher_api(404), post=researcher_api(415)),
    "study_api:study-detail": Row(get=researcher_api(), kwargs=k(slug="study_slug")),
    "study_api:study-transition": Row(get=researcher_api(405), post=researcher_api(400), kwargs=k(slug="study_slug")),
    "study_api:results": Row(get=researcher_api(), kwargs=k(slug="study_slug")),
    "study_api:responses": Row(get=researcher_api(), kwargs=k(slug="study_slug")),
    # --- Prolific: the study's page and its actions (an empty form: 400 or back to the page) ---------
    "prolific:study": Row(get=researcher_page(), kwargs=k(slug="study_slug")),
    "prolific:log": Row(get=researcher_page(), kwargs=k(slug="study_slug")),
    "prolific:create": Row(get=POST_ONLY, post=researcher_page(400), kwargs=k(slug="study_slug")),
    "prolific:publish": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "prolific:sync": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "prolific:hooks": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "prolific:approve": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "prolific:reject": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "prolific:request_return": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    "prolific:bonus_create": Row(get=POST_ONLY, post=researcher_page(400), kwargs=k(slug="study_slug")),
    "prolific:bonus_pay": Row(get=POST_ONLY, post=researcher_page(REDIRECT), kwargs=k(slug="study_slug")),
    # Prolific's webhook: no session, only its signature; an unsigned POST is refused (and recorded).
    "prolific:webhook": Row(get=POST_ONLY, post=answers(403)),
}

# Django's own views, declared by prefix: they are not the app's code, but each must still
# answer as expected (the admin to staff only, sign-in pages to everyone).
PREFIX_RULES: dict[str, Row] = {
    "admin:login": Row(get=answers(200)),
    "admin:logout": Row(get=answers(REDIRECT)),
    "admin:": Row(get=answers(ADMIN_LOGIN)),
    "login": Row(get=answers(200)),
    "logout": Row(get=answers(405)),
    "password_change": Row(get=answers(200, anonymous=LOGIN, participant=LOGIN, other_participant=LOGIN)),
    "password_reset": Row(get=answers(200)),
    "set_language": Row(get=answers(REDIRECT)),
}


# --- The URL conf --------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    name: str
    route: str
    pattern: URLPattern

    @property
    def key(self) -> str:
        return self.route


def url_patterns() -> list[Pattern]:
    found = []

    def walk(resolver, prefix: str, namespace: str):
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                inner = ":".join(filter(None, [namespace, entry.namespace]))
                walk(entry, prefix + str(entry.pattern), inner)
            else:
                name = ":".join(filter(None, [namespace, entry.name or ""])) if entry.name else f"{namespace}:?"
                found.append(Pattern(name=name, route=prefix + str(entry.pattern), pattern=entry))

    walk(get_resolver(), "", "")
    return found


def row_for(pattern: Pattern) -> Row | None:
    if pattern.name in TABLE:
        return TABLE[pattern.name]
    for prefix, row in PREFIX_RULES.items():
        if pattern.name == prefix or (prefix.endswith(":") and pattern.name.startswith(prefix)):
            return row
        if not prefix.endswith(":") and pattern.name.startswith(prefix):
            return row
    return None


def is_format_suffix(pattern: Pattern) -> bool:
    return "format" in pattern.pattern.pattern.regex.groupindex


PATTERNS = url_patterns()
# The admin is declared by a rule and tested on the patterns that need no object:
# its hundred routes all answer the same way to non-staff, which the rule states.
TESTED = [p for p in PATTERNS if not (p.name.startswith("admin:") and p.pattern.pattern.regex.groupindex)]


def test_it_declares_every_url_pattern():
    missing = [f"{p.name} ({p.route})" for p in PATTERNS if row_for(p) is None]
    assert not missing, "URL patterns without an entry in the permission matrix:\n  " + "\n  ".join(missing)
    stale = set(TABLE) - {p.name for p in PATTERNS}
    assert not stale, f"Rows for URL names that no longer exist: {sorted(stale)}"


# --- The world ------------------------------------------------------------------------------

GOLD_CSV = (
    "expression,explanation,traits,theme\n"
    "Ăn quả nhớ kẻ trồng cây,Biết ơn người đi trước,folk_knowledge,work_nature\n"
    "Nước chảy đá mòn,Bền bỉ thắng tất cả,literal,virtues\n"
    "Có công mài sắt có ngày nên kim,Kiên trì thì thành công,pragmatic,life_lessons\n"
)
# With an id: the harness tasks of a version match logs back to its items by id.
DONE_CSV = "id,expression,explanation\nm-1,Gần mực thì đen,Môi trường ảnh hưởng con người\n"


class World:
    pass


def _entry(client: Client, slug: str, pid: str) -> None:
    url = reverse("study:entry", args=[slug])
    response = client.get(
        url,
        {
            "PROLIFIC_PID": prolific_id_for(pid),
            "STUDY_ID": prolific_id_for("matrix"),
            "SESSION_ID": prolific_id_for(f"s-{pid}"),
            "group": "american",
        },
    )
    assert response.status_code == 302, response.content[:500]


def build_world() -> World:
    w = World()
    users = {
        "no_role": make_user("outsider"),
        "annotator_a": make_user("annotator_a", ANNOTATOR),
        "annotator_b": make_user("annotator_b", ANNOTATOR),
        "annotator_adjudicator": make_user("annotator_adjudicator", ANNOTATOR, ADJUDICATOR),
        "adjudicator": make_user("adjudicator", ADJUDICATOR),
        "researcher": make_user("researcher", RESEARCHER),
    }
    a, b, aa, researcher = (users[n] for n in ("annotator_a", "annotator_b", "annotator_adjudicator", "researcher"))
    expression_import(dataset_name="Matrix corpus", filename="m.csv", content=GOLD_CSV.encode(), user=researcher)
    dataset = Dataset.objects.get(name="Matrix corpus")
    w.dataset_pk = dataset.pk
    w.expression_pk = dataset.expressions.order_by("id").first().pk
    w.import_pk = import_job_create(
        dataset_name="Matrix corpus 2", filename="n.csv", content=DONE_CSV.encode(), user=researcher
    ).pk
    # An open round: three items, each shared by a different pair of annotators.
    round_ = round_create(name="Open round", dataset=dataset, annotators=[a, b, aa], user=researcher, seed=5)
    w.round_pk = round_.pk
    item = next(i for i in round_.items.all() if {x.annotator_id for x in i.assignments.all()} == {a.pk, aa.pk})
    w.item_pk = item.pk
    w.assignment_pk = item.assignments.get(annotator=a).pk
    assignment_submit(assignment=item.assignments.get(annotator=a), user=a, theme="love")
    assignment_submit(assignment=item.assignments.get(annotator=aa), user=aa, theme="virtues")
    # A frozen version of another round.
    expression_import(dataset_name="Matrix done", filename="d.csv", content=DONE_CSV.encode(), user=researcher)
    done = round_create(
        name="Done round", dataset=Dataset.objects.get(name="Matrix done"), annotators=[a, b], user=researcher, seed=1
    )
    for assignment in (x for i in done.items.all() for x in i.assignments.all()):
        assignment_submit(assignment=assignment, user=assignment.annotator, theme="love")
    assert not done.items.exclude(status=ItemStatus.UNANIMOUS).exists()
    round_lock(round=done)
    w.version_pk = version_freeze(round=done, name="Matrix v1", user=researcher).pk
    # Evaluation: a generation run, a scoring task for A and B, an artwork pipeline run.
    run = make_generation_run(numbered_dataset(4))
    w.run_pk, w.run_item_pk, w.prompt_pk = run.pk, run.items.first().pk, run.prompt_id
    w.model_pk = run.model_id
    w.judge_run_pk = make_judge_run(run, 3).pk
    task = scoring_task_create(
        name="Matrix scoring", run=run, raters=[a, b], n_items=2, n_shared=2, seed=1, user=researcher
    )
    w.task_pk = task.pk
    w.rating_pk = task.ratings.filter(rater=a).first().pk
    artwork_run = make_pipeline_run(per_culture=1, name="Matrix artworks")
    w.artwork_run_pk = artwork_run.pk
    w.collection_pk = artwork_run.collection_id
    w.collection_artwork_pk = artwork_run.collection.artworks.first().pk
    # A live study with two participant sessions.
    study = make_study()
    w.study_slug = study.slug
    w.study_image_key = study.artworks.order_by("position").first().key
    w.clients = {"anonymous": Client()}
    for persona, user in users.items():
        w.clients[persona] = Client()
        w.clients[persona].force_login(user)
    for persona, pid in (("participant", "pid-one"), ("other_participant", "pid-two")):
        w.clients[persona] = Client()
        _entry(w.clients[persona], study.slug, pid)
    return w


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            yield build_world()
        finally:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


# --- The checks -------------------------------------------------------------------------------


def url_of(pattern: Pattern, row: Row, w: World) -> str:
    kwargs = row.kwargs(w)
    groups = pattern.pattern.pattern.regex.groupindex
    if "format" in groups:
        kwargs["format"] = "json"  # the API routers' format-suffix routes
    for name in groups:
        kwargs.setdefault(name, "1")  # Django's own routes (a password reset link, the admin's object id)
    url = reverse(pattern.name, kwargs={key: value for key, value in kwargs.items() if key in groups})
    assert resolve(url).route.replace("^", "") == pattern.route.replace("^", ""), f"{url} is not {pattern.route}"
    return url + row.query


def outcome(response) -> object:
    if response.status_code in (301, 302, 303):
        location = response["Location"]
        if location.startswith(reverse("admin:login")):
            return ADMIN_LOGIN
        if location.startswith(reverse("login")):
            return LOGIN
        return REDIRECT
    return response.status_code


def _counted_tables() -> list[str]:
    # Sessions change on every request; failed sign-ins (axes) and refused webhooks (counted, a few kept)
    # are meant to be recorded.
    skip = ("django_session", "django_admin_log", "axes_", "prolific_webhookdelivery", "prolific_webhookrefusalcount")
    tables = {
        model._meta.db_table
        for model in apps.get_models(include_auto_created=True)
        if model._meta.managed and not model._meta.proxy
    }
    return sorted(t for t in tables if not t.startswith(skip))


def table_writes() -> dict[str, int]:
    """What the database says of its tables, to compare before and after a request. On PostgreSQL the
    rows each table had inserted, updated or deleted in this transaction (``pg_stat_xact_user_tables``:
    one cheap query, and it sees an UPDATE too); elsewhere the rows per table, in one query."""
    tables = _counted_tables()
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_xact_user_tables WHERE relname = ANY(%s)",
                [tables],
            )
            return dict(cursor.fetchall())
        cursor.execute("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {quote(t)})" for t in tables))
        return dict(zip(tables, cursor.fetchone(), strict=True))


CASES = [
    pytest.param(pattern, persona, method, id=f"{method} {pattern.route} {persona}")
    for pattern in TESTED
    if row_for(pattern) is not None
    for method in ("GET", "POST")
    if getattr(row_for(pattern), method.lower()) is not None
    for persona in PERSONAS
]


# Who may do what is decided by the views' checks, not by the engine under them: one pass of
# `make test` is enough for its three thousand cases. The SQLite one: each case is a few queries
# answered in-process there, and a round trip to the server each on PostgreSQL (33 s alone against 25 s).
@pytest.mark.once
@pytest.mark.sqlite_pass
@pytest.mark.django_db
@pytest.mark.parametrize(("pattern", "persona", "method"), CASES)
def test_it_answers_each_persona_as_declared(world, pattern, persona, method):
    row = row_for(pattern)
    expected = getattr(row, method.lower())[persona]
    client = world.clients[persona]
    url = url_of(pattern, row, world)
    # Each case starts from the world as built: the database rolls back after it, and so do the
    # browser's cookies (a refused entry link drops the participant's cookie, as it should).
    cookies = copy.deepcopy(client.cookies)
    try:
        got = _answer_of(client, url, method, expected, persona)
    finally:
        client.cookies = cookies
    assert got == expected, f"{method} {url} as {persona}: expected {expected}, got {got}"


def _answer_of(client, url: str, method: str, expected, persona: str):
    if method == "GET":
        got = outcome(client.get(url))
    else:
        refused = expected in (401, 403, 404, 405, LOGIN, ADMIN_LOGIN)
        before = table_writes() if refused else None
        # The API reads JSON (some endpoints only multipart: they answer 415 to this empty body).
        body = {"content_type": "application/json"} if url.startswith("/api/") else {}
        got = outcome(client.post(url, {}, **body))
        if refused:
            assert table_writes() == before, f"a refused POST to {url} as {persona} wrote to the database"
    return got


@pytest.mark.django_db
def test_it_keeps_each_participant_on_their_own_session(world):
    """The run page follows the session of the browser: a participant who moved on does not
    show up in another participant's browser, and a visitor without a session sees neither."""
    from study.models import Participant

    url = reverse("study:run", args=[world.study_slug])
    first, other = world.clients["participant"], world.clients["other_participant"]
    moved = first.post(url, {"step": "consent", "consent": "yes"})
    assert moved.status_code == 200  # the next page comes in the answer
    mine = first.get(url).content.decode()
    theirs = other.get(url).content.decode()
    assert 'value="consent"' not in mine and 'value="consent"' in theirs
    assert (
        Participant.objects.get(prolific_pid=prolific_id_for("pid-two")).status
        != Participant.objects.get(prolific_pid=prolific_id_for("pid-one")).status
    )
    assert world.clients["anonymous"].get(url).status_code == NO_SESSION


@pytest.mark.django_db
def test_it_sees_what_a_refused_request_would_write():
    from django.contrib.auth.models import Group

    before = table_writes()
    group = Group.objects.create(name="written-by-a-refused-request")
    assert table_writes() != before
    if connection.vendor == "postgresql":
        # Rows counted per table would miss an UPDATE; what PostgreSQL counts per transaction does not.
        before = table_writes()
        Group.objects.filter(pk=group.pk).update(name="changed-by-a-refused-request")
        assert table_writes() != before
