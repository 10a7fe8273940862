"""Writes of the evaluation app: business logic shared by views, the API, commands and tasks."""
