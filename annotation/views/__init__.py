"""HTML and htmx views of the annotation app, one module per part of the workflow."""

from . import adjudication, corpus, review, rounds, stats

__all__ = ["adjudication", "corpus", "review", "rounds", "stats"]
