"""HTML views of the artworks app (researchers only): thin, they call services and selectors."""
