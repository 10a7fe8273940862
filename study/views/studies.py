from django.http import Http404


def _todo(request, *args, **kwargs):
    raise Http404("not yet")
study_list = study_import = study_detail = study_transition = _todo
