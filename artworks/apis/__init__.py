"""The artworks REST API under /api/evaluation/ (researchers only): thin views over services and selectors."""
