"""Placeholder API views for the workflow: each is replaced by its own module."""

from rest_framework.response import Response
from rest_framework.views import APIView


class _Todo(APIView):
    schema = None  # kept out of the OpenAPI schema until implemented

    def get(self, request, *args, **kwargs):
        return Response({"detail": "todo"}, status=501)
