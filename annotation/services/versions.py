"""Frozen dataset versions: the decided items of a locked round, copied so they never change.

The export of a version is in services/exports/.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.services.idempotency import idempotent_create

from ..models import (
    AnnotationRound,
    DatasetVersion,
    DatasetVersionItem,
    ItemStatus,
    Provenance,
    RoundStatus,
)
from ..selectors.workflow import round_funnel
from .changes import round_changed

VERSION_IDEMPOTENCY_SCOPE = "annotation.version"


def version_freeze(
    *, round: AnnotationRound, name: str, user=None, idempotency_key: str | None = None
) -> DatasetVersion:
    """Freeze the accepted items of a locked round into a named, immutable version.

    A second request with the same ``idempotency_key`` (a double submit, a retried API call)
    returns the version the first one froze, with ``version.idempotent_repeat`` set, instead of
    refusing the round as already frozen.
    """
    version = idempotent_create(
        scope=VERSION_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=DatasetVersion,
        create=lambda: _version_freeze(round=round, name=name, user=user),
    )
    return version


@transaction.atomic
def _version_freeze(*, round: AnnotationRound, name: str, user) -> DatasetVersion:
    round = AnnotationRound.objects.select_for_update().get(pk=round.pk)
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": _("a version needs a name")})
    if DatasetVersion.objects.filter(name=name).exists():
        raise ValidationError({"name": _("a version named '%(name)s' already exists") % {"name": name}})
    if round.status == RoundStatus.OPEN:
        raise ValidationError(_("Lock the round before freezing a version."))
    if round.status == RoundStatus.FROZEN:
        existing = round.versions.order_by("created_at").first()
        raise ValidationError(
            _("This round is already frozen as '%(name)s'.") % {"name": existing.name if existing else "?"}
        )
    funnel = round_funnel(round=round)
    if funnel["undecided"]:
        # Freezing used to drop such items silently; a version must account for every item.
        raise ValidationError(
            ngettext(
                "%(n)s item of round “%(round)s” is not decided yet (%(pending)s awaiting reviews, "
                "%(waiting)s needing adjudication): adjudicate or remove it first, or reopen the round "
                "for the missing reviews.",
                "%(n)s items of round “%(round)s” are not decided yet (%(pending)s awaiting reviews, "
                "%(waiting)s needing adjudication): adjudicate or remove them first, or reopen the round "
                "for the missing reviews.",
                funnel["undecided"],
            )
            % {
                "n": funnel["undecided"],
                "round": round.name,
                "pending": funnel["pending"],
                "waiting": funnel["needs_adjudication"],
            }
        )
    version = DatasetVersion.objects.create(name=name, round=round, funnel=funnel, created_by=user)
    accepted = (
        round.items.filter(status__in=[ItemStatus.UNANIMOUS, ItemStatus.ADJUDICATED], control__isnull=True)
        .select_related("expression", "final_theme")
        .prefetch_related("final_traits")
        .order_by("expression_id")
    )
    DatasetVersionItem.objects.bulk_create(
        [
            DatasetVersionItem(
                version=version,
                expression=item.expression,
                external_id=item.expression.external_id,
                text=item.expression.text,
                explanation=item.expression.explanation,
                kind=item.expression.kind,
                source=item.expression.source,
                traits=[t.code for t in sorted(item.final_traits.all(), key=lambda t: t.number)],
                theme=item.final_theme.code,
                metadata=item.expression.metadata,
                provenance=Provenance.UNANIMOUS if item.status == ItemStatus.UNANIMOUS else Provenance.ADJUDICATED,
            )
            for item in accepted
        ],
        batch_size=1000,
    )
    AnnotationRound.objects.filter(pk=round.pk).update(status=RoundStatus.FROZEN)
    round_changed(round_id=round.pk)
    return version
