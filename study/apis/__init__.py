"""REST API views of the study app: thin, they call services and selectors."""
