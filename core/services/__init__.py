"""Writes every app shares."""
