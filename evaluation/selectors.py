"""Reads of the evaluation app: queries shared by views, the API and services."""
