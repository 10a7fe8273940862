"""Reads of the artworks app: collections, pipeline runs and their progress, the report (Table 1)."""
