import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vivid_site.settings")
application = get_wsgi_application()

# Import every view and the statistics libraries now (about a second), not on the first
# participant's or researcher's request; with gunicorn --preload this happens once, before the fork.
from django.urls import get_resolver  # noqa: E402

from core.warmup import libraries_import  # noqa: E402

get_resolver().url_patterns  # noqa: B018
libraries_import()
