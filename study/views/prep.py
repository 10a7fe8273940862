from django.http import Http404


def _todo(request, *args, **kwargs):
    raise Http404("not yet")
study_terms = study_prepare = _todo
