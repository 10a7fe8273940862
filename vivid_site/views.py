from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation.roles import user_roles
from annotation.selectors import dataset_list

HOME_DATASETS = 10


@login_required
def home(request):
    """Each role sees what it can do; a signed-in user with no role is told whom to ask."""
    # Without a role the page shows only whom to ask, so the corpus is not even queried.
    datasets = dataset_list()[:HOME_DATASETS] if user_roles(request.user) else []
    return render(request, "home.html", {"datasets": datasets})
