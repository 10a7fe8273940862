"""Study API (studies)."""

urlpatterns = []
