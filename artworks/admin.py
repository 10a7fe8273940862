"""Django admin of the artworks app: nothing registered, collections and runs are read and edited on their own pages."""
