"""Status changes of a study (launch, pause, resume, close) and deleting a draft.

Each change is one guarded UPDATE on the expected status, so two researchers (or a
double click) cannot both move a study, and the loser gets a clear error.
"""

from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from ..models import Artwork, Participant, Study, StudyStatus
from ..selectors.studies import study_launch_blockers


class StudyTransitionError(ValueError):
    pass


def _move(*, study: Study, sources: tuple[str, ...], target: str, verb: str, **fields) -> Study:
    changed = Study.objects.filter(pk=study.pk, status__in=sources).update(status=target, **fields)
    study.refresh_from_db()
    if not changed:
        raise StudyTransitionError(
            _("the study is %(status)s and cannot be %(verb)s")
            % {"status": study.get_status_display().lower(), "verb": verb}
        )
    return study


def study_launch(*, study: Study, user=None) -> Study:
    """Open a draft study to participants, once its highlights and terms are ready."""
    with transaction.atomic():
        study.refresh_from_db()
        if study.status != StudyStatus.DRAFT:
            raise StudyTransitionError(
                _("the study is %(status)s and cannot be launched") % {"status": study.get_status_display().lower()}
            )
        blockers = study_launch_blockers(study=study)
        if blockers:
            raise StudyTransitionError(
                _("the study cannot be launched yet: %(reasons)s") % {"reasons": "; ".join(blockers)}
            )
        return _move(
            study=study,
            sources=(StudyStatus.DRAFT,),
            target=StudyStatus.LIVE,
            verb=_("launched"),
            launched_at=timezone.now(),
        )


def study_pause(*, study: Study, user=None) -> Study:
    """Stop new participants; those in a session can finish it."""
    return _move(study=study, sources=(StudyStatus.LIVE,), target=StudyStatus.PAUSED, verb=_("paused"))


def study_resume(*, study: Study, user=None) -> Study:
    return _move(study=study, sources=(StudyStatus.PAUSED,), target=StudyStatus.LIVE, verb=_("resumed"))


def study_close(*, study: Study, user=None) -> Study:
    """End the study for good; its results stay readable."""
    return _move(
        study=study,
        sources=(StudyStatus.LIVE, StudyStatus.PAUSED),
        target=StudyStatus.CLOSED,
        verb=_("closed"),
        closed_at=timezone.now(),
    )


TRANSITIONS = {
    "launch": study_launch,
    "pause": study_pause,
    "resume": study_resume,
    "close": study_close,
}


def study_transition(*, study: Study, action: str, user=None) -> Study:
    """The transition named ``action`` (launch, pause, resume or close)."""
    try:
        service = TRANSITIONS[action]
    except KeyError:
        raise StudyTransitionError(_("unknown action “%(action)s”") % {"action": action}) from None
    return service(study=study, user=user)


def study_delete(*, study: Study, user=None) -> None:
    """Delete a draft study nobody took part in, with its image files.

    Preview sessions are the researcher's own and go with the study.
    """
    with transaction.atomic():
        locked = Study.objects.select_for_update().filter(pk=study.pk).first()
        if locked is None:
            return
        if locked.status != StudyStatus.DRAFT:
            raise StudyTransitionError(_("only a draft study can be deleted"))
        if Participant.objects.filter(study=locked, is_preview=False).exists():
            raise StudyTransitionError(_("participants have taken part in this study; close it instead"))
        names = []
        for image, variants in Artwork.objects.filter(study=locked).values_list("image", "image_variants"):
            names += [name for name in (image, *(variant.get("name") for variant in variants or ())) if name]
        # Assignments protect their artworks, so the preview sessions go first.
        Participant.objects.filter(study=locked).delete()
        locked.delete()
        transaction.on_commit(lambda: [default_storage.delete(name) for name in names])
