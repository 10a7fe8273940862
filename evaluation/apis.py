"""REST API views of the evaluation app: thin, they call services and selectors."""
