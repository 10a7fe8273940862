"""The REST API under /api/ (HackSoft style: thin APIs over services and selectors).

annotation/urls.py and vivid_site/urls.py import the views from here.
"""

from core.apis.common import ApiRootView

from .corpus import DatasetViewSet, ExpressionViewSet, ThemeViewSet, TraitViewSet
from .imports import ImportApi

__all__ = [
    "ApiRootView",
    "DatasetViewSet",
    "ExpressionViewSet",
    "ImportApi",
    "ThemeViewSet",
    "TraitViewSet",
]
