"""HTML views of the study app: thin, they call services and selectors (``presenters`` builds
the participant pages' context)."""
