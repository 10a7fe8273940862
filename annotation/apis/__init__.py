"""The REST API under /api/ (HackSoft style: thin APIs over services and selectors).

annotation/urls.py and vivid_site/urls.py import the views from here.
"""

from .auth import TokenApi
from .common import ApiRootView
from .corpus import DatasetViewSet, ExpressionViewSet, ThemeViewSet, TraitViewSet
from .imports import ImportApi
from .schema import SchemaApi, SchemaDocsApi

__all__ = [
    "ApiRootView",
    "DatasetViewSet",
    "ExpressionViewSet",
    "ImportApi",
    "SchemaApi",
    "SchemaDocsApi",
    "ThemeViewSet",
    "TokenApi",
    "TraitViewSet",
]
