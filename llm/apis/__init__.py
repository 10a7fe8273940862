"""The llm REST API (researchers only): thin views over services and selectors."""

from .models import ModelListApi

__all__ = ["ModelListApi"]
