"""HTML views of the evaluation app (researchers only): thin, they call services and selectors."""
