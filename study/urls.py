"""URL routes of the study app (none yet)."""

app_name = "study"

urlpatterns = []
