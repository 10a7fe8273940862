"""Forms of the llm pages; the names callers use are re-exported here."""

from .models import ModelAddForm

__all__ = ["ModelAddForm"]
