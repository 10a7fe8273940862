"""HTML views of the study app: thin, they call services and selectors."""

from django.http import Http404

from ..models import Study
from ..selectors.studies import study_find


def study_or_404(slug: str) -> Study:
    study = study_find(slug=slug)
    if study is None:
        raise Http404
    return study
