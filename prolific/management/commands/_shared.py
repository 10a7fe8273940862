"""What the prolific_* commands share: the study by slug, and what to say without a token."""

from django.conf import settings
from django.core.management.base import CommandError

from study.selectors.studies import study_find

from ...selectors import prolific_configured, site_unreachable


def study_or_error(slug: str):
    study = study_find(slug=slug)
    if study is None:
        raise CommandError(f"No study with slug {slug!r}.")
    return study


def require_token(stdout, would: str) -> None:
    """Without a token: say what the command would have done and which variable to set; exit 1."""
    if not prolific_configured():
        stdout.write(f"Without a token, nothing was sent. With one, this command would {would}.")
        raise CommandError(
            f"No Prolific API token: set the environment variable {settings.PROLIFIC_API_TOKEN_ENV} "
            "(a token from Prolific's settings page) and run the command again."
        )


def warn_unreachable(command, url: str) -> None:
    """On stderr (stdout stays what scripts read): the page's warning when Prolific cannot reach ``url``."""
    problem = site_unreachable(url)
    if problem:
        command.stderr.write(
            f"warning: {problem} Pass --site-url https://... or set PROLIFIC_SITE_URL to the app's public address."
        )
