"""Writes of the artworks app: the collection import, a researcher's edits, the pipeline, the study-package export."""
