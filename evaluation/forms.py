"""Django forms of the evaluation app, for validating input to its views."""
