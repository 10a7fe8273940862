"""HTML views of the llm app (researchers only): thin, they call services and selectors."""
