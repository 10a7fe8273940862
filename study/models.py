"""Database models of the study app (none yet)."""
