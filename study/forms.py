"""Django forms of the study app, for validating input to its views."""
