"""The API's page numbers (a module of its own: DRF imports the default pagination class while
its generic views load, before core.apis.common could be)."""

from django.utils.translation import gettext as _
from rest_framework import exceptions, pagination


class PageNumberPagination(pagination.PageNumberPagination):
    """DRF's page numbers, with an empty ``page`` refused (404) like any other page that is not a number,
    and a ``page_size`` outside 1..max_page_size refused (400) rather than read as the default."""

    def get_page_size(self, request):
        param = self.page_size_query_param
        if param and param in request.query_params:
            text = request.query_params[param]
            size = int(text) if text.isascii() and text.isdigit() else 0
            if size < 1 or (self.max_page_size is not None and size > self.max_page_size):
                message = _("A whole number from 1 to %(max)s.") % {"max": self.max_page_size or "∞"}
                raise exceptions.ValidationError({param: [message]})
        return super().get_page_size(request)

    def get_page_number(self, request, paginator):
        # DRF reads "?page=" as the first page; the schema promises an integer, so it is no page.
        if request.query_params.get(self.page_query_param) == "":
            message = _("That page number is not an integer")
            raise exceptions.NotFound(self.invalid_page_message.format(page_number="", message=message))
        return super().get_page_number(request, paginator)
