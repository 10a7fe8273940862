"""Celery tasks of the study app: thin wrappers that call its services."""
