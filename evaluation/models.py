"""Database models of the evaluation app (none yet)."""
