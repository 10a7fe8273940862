"""Reads of the study app: queries shared by views, the API and services."""
