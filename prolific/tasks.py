"""Celery tasks of the Prolific integration: each takes ids and calls a service."""
