# Placeholder: the page views are being written.
from django.http import HttpResponse


def _todo(request, *args, **kwargs):
    return HttpResponse("todo")


dataset_list = dataset_detail = dataset_export = import_start = import_detail = import_confirm = import_cancel = _todo
