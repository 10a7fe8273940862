"""Django forms of the study app, for validating input to its views."""

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class StudyImportForm(forms.Form):
    package = forms.FileField(
        label=_("Study package"),
        help_text=_("A .zip holding study.json and the images, at its root or in one top-level folder."),
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,application/zip"}),
    )

    def clean_package(self):
        upload = self.cleaned_data["package"]
        if not upload.name.lower().endswith(".zip"):
            raise forms.ValidationError(_("Upload a .zip file."))
        # Refused before it is read; the service applies the same limit.
        limit = settings.VIVID_IMPORT_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                _("The file is %(size)s bytes; the limit is %(limit)s bytes.") % {"size": f"{upload.size:,}", "limit": f"{limit:,}"}
            )
        return upload


class StudyTransitionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("launch", _("Launch")), ("pause", _("Pause")), ("resume", _("Resume")), ("close", _("Close")), ("delete", _("Delete"))]
    )
