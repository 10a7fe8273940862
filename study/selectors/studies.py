"""Reads of studies: the one look-up by slug (``study_find``; the 404 is ``lookups.study_or_404``), lists with
progress, the launch checklist and its blockers."""

from django.db.models import Count, Q
from django.utils.translation import gettext as _

from ..models import (
    Artwork,
    DescriptionPair,
    Participant,
    ParticipantStatus,
    PrepStatus,
    Study,
    Term,
    TermStatus,
)
from ..rules import study_consent_missing
from .prep import study_terms_unmatched
from .translations import study_translations_missing

# Previews and synthetic test responses never count toward progress or quotas.
REAL_PARTICIPANTS = Q(is_preview=False, is_test=False)
TERM_REVIEWED = (TermStatus.CONFIRMED, TermStatus.REJECTED)


def study_group_counts(*, study_ids: list[int]) -> dict[int, dict[str, dict[str, int]]]:
    """{study id: {group: {"started", "completed"}}}; started means consented, completed means a valid finish."""
    rows = (
        Participant.objects.filter(REAL_PARTICIPANTS, study_id__in=study_ids)
        .values("study_id", "group")
        .annotate(
            started=Count("id", filter=Q(consented_at__isnull=False)),
            completed=Count("id", filter=Q(status=ParticipantStatus.COMPLETED)),
        )
    )
    counts: dict[int, dict[str, dict[str, int]]] = {}
    for row in rows:
        counts.setdefault(row["study_id"], {})[row["group"]] = {
            "started": row["started"],
            "completed": row["completed"],
        }
    return counts


def _progress(study: Study, counts: dict[str, dict[str, int]]) -> list[dict]:
    return [
        {
            "group": group,
            "started": counts.get(group, {}).get("started", 0),
            "completed": counts.get(group, {}).get("completed", 0),
            "quota": study.quota_per_group,
        }
        for group in study.groups
    ]


def study_list() -> list[Study]:
    """Every study, newest first, each with ``progress``: one row per group (started, completed, quota)."""
    studies = list(Study.objects.select_related("created_by").annotate(n_artworks=Count("artworks")))
    counts = study_group_counts(study_ids=[study.pk for study in studies])
    for study in studies:
        study.progress = _progress(study, counts.get(study.pk, {}))
    return studies


def study_find(*, slug: str, progress: bool = False, package: bool = True) -> Study | None:
    """The study of a slug, or None: every look-up of a study by its slug goes through here.

    ``progress``: with its creator and its ``progress`` rows (the researcher's study page and
    API). ``package=False`` leaves out the imported study.json, which the participant pages read
    through ``study_content`` once per process.
    """
    studies = Study.objects.filter(slug=slug)
    if progress:
        studies = studies.select_related("created_by")
    if not package:
        studies = studies.defer("package")
    study = studies.first()
    if study is not None and progress:
        study.progress = _progress(study, study_group_counts(study_ids=[study.pk]).get(study.pk, {}))
    return study


def study_artwork_find(*, study: Study, key: str) -> Artwork | None:
    return Artwork.objects.filter(study=study, key=key).first()


def study_artwork_find_by_pk(*, study: Study, pk) -> Artwork | None:
    """An artwork of this study by its id as posted (anything but digits finds nothing)."""
    if not str(pk or "").isdigit():
        return None
    return Artwork.objects.filter(study=study, pk=pk).first()


def study_launch_blockers(*, study: Study) -> list[str]:
    """What still keeps a draft study from launching, as sentences for the researcher."""
    blockers = []
    if study.highlight_status != PrepStatus.READY:
        blockers.append(
            _("the sentence pairs are not computed (highlighting is %(status)s)")
            % {"status": study.get_highlight_status_display().lower()}
        )
    if study.terms_status in (PrepStatus.PENDING, PrepStatus.RUNNING):
        blockers.append(_("the search for culture-specific terms has not finished"))
    unreviewed = Term.objects.filter(artwork__study=study).exclude(status__in=TERM_REVIEWED).count()
    if unreviewed:
        total = Term.objects.filter(artwork__study=study).count()
        blockers.append(
            _("%(n)s of %(total)s terms are not yet confirmed or rejected") % {"n": unreviewed, "total": total}
        )
    return blockers


def study_artworks(*, study: Study):
    """The artworks of a study in package order, with their question and description counts and
    how often real participants were given each."""
    return (
        Artwork.objects.filter(study=study)
        .annotate(
            n_questions=Count("questions", distinct=True),
            n_descriptions=Count("descriptions", distinct=True),
            n_assigned=Count(
                "assignments",
                filter=Q(assignments__participant__is_preview=False, assignments__participant__is_test=False),
                distinct=True,
            ),
        )
        .order_by("position")
    )


def study_term_counts(*, study: Study) -> dict[str, int]:
    counts = dict(
        Term.objects.filter(artwork__study=study)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    total = sum(counts.values())
    reviewed = counts.get(TermStatus.CONFIRMED, 0) + counts.get(TermStatus.REJECTED, 0)
    return {"total": total, "reviewed": reviewed, **{status: counts.get(status, 0) for status in TermStatus.values}}


def study_checklist(study: Study) -> list[dict]:
    """The launch checklist: each item has ``key``, ``done`` and a ``detail`` line.

    Launching needs every item but the preview, which is strongly advised, and four warnings: the
    consent page details, the confirmed terms that occur in no description of their artwork
    (``glosses``: their Chinese label would never reach a participant), the artworks without a text
    alternative for their image (``alt_text``: screen readers hear only the title), and the texts a
    group whose language is not English would read in English (``translations``).
    """
    n_artworks = study.artworks.count()
    pairs = DescriptionPair.objects.filter(artwork__study=study)
    n_pairs = pairs.count()
    n_computed = pairs.filter(computed_at__isnull=False).count()
    terms = study_term_counts(study=study)
    previewed = Participant.objects.filter(study=study, is_preview=True).exists()
    terms_searching = study.terms_status in (PrepStatus.PENDING, PrepStatus.RUNNING)
    consent_missing = study_consent_missing(study)
    unmatched = study_terms_unmatched(study=study)
    untranslated = study_translations_missing(study)
    no_alt = list(study.artworks.filter(alt="").order_by("position").values("key", "title"))
    return [
        {
            "key": "package",
            "done": n_artworks > 0,
            "detail": {"artworks": n_artworks, "sha256": study.package_sha256},
        },
        {
            "key": "pairs",
            "done": study.highlight_status == PrepStatus.READY,
            "detail": {
                "computed": n_computed,
                "total": n_pairs,
                "status": study.highlight_status,
                "error": study.highlight_error,
                "model": study.highlight_model,
            },
        },
        {
            "key": "terms",
            "done": not terms_searching and terms["reviewed"] == terms["total"],
            "detail": {
                "reviewed": terms["reviewed"],
                "total": terms["total"],
                "status": study.terms_status,
                "error": study.terms_error,
            },
        },
        {
            "key": "glosses",
            "done": not unmatched,
            "detail": {
                "required": False,
                "unmatched": [
                    {"artwork": term.artwork.key, "title": term.artwork.title, "term": term.term, "zh": term.zh}
                    for term in unmatched
                ],
            },
        },
        {
            "key": "preview",
            "done": previewed,
            "detail": {"required": False},
        },
        {
            "key": "consent",
            "done": not consent_missing,
            "detail": {"required": False, "missing": consent_missing},
        },
        {
            "key": "alt_text",
            "done": not no_alt,
            "detail": {
                "required": False,
                "missing": [{"artwork": row["key"], "title": row["title"]} for row in no_alt],
            },
        },
        {
            "key": "translations",
            "done": not untranslated,
            "detail": {"required": False, "missing": untranslated},
        },
    ]
