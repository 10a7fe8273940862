"""Placeholder: being written."""

from django.http import HttpResponse


def _todo(request, *args, **kwargs):
    return HttpResponse("todo", status=501)


queue = item = draft = skip = outcomes = _todo
