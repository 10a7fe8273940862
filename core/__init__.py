"""What every app uses and no app owns. Every app may import core; core imports no app."""
