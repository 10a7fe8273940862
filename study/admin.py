"""Django admin registrations for the study app; nothing is registered until it has models."""
