# Placeholder: the API is being written.
from rest_framework import viewsets
from rest_framework.views import APIView

from .models import Dataset, Expression, Theme, Trait


class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Dataset.objects.all()


class ExpressionViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Expression.objects.all()


class TraitViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Trait.objects.all()


class ThemeViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Theme.objects.all()


class ImportApi(APIView):
    pass
