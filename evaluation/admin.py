"""Django admin registrations for the evaluation app; nothing is registered until it has models."""
