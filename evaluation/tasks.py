"""Celery tasks of the evaluation app: thin wrappers that call its services."""
