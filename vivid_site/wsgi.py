import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vivid_site.settings")
application = get_wsgi_application()

# Import every view now (about a second: pandas, scipy, statsmodels), not on the first
# participant's request; with gunicorn --preload this happens once, before the fork.
from django.urls import get_resolver  # noqa: E402

get_resolver().url_patterns  # noqa: B018
