"""How a listener group or an artist's culture is named on a page: the study's culture labels in the
active language for the known codes, else the code as a capitalised word ("vietnamese" -> "Vietnamese")."""

from django.utils.translation import gettext_lazy as _

GROUP_LABELS = {"american": _("American"), "chinese": _("Chinese")}


def group_label(group) -> str:
    text = str(group or "").strip()
    label = GROUP_LABELS.get(text.lower())
    if label is not None:
        return str(label)
    return text.replace("_", " ")[:1].upper() + text.replace("_", " ")[1:]
