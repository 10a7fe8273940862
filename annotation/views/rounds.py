"""Placeholder: being written."""

from django.http import HttpResponse


def _todo(request, *args, **kwargs):
    return HttpResponse("todo", status=501)


round_list = round_new = round_detail = round_lock = round_reopen = round_freeze = _todo
suggestion_import = version_list = version_detail = version_export = _todo
