"""Writes of the study app: business logic shared by views, the API, commands and tasks."""
