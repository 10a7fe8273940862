from django import template

from artworks.labels import group_label

register = template.Library()


@register.filter
def listener_group(value) -> str:
    """A listener group or culture code by its label: ``american`` -> "American"."""
    return group_label(value)


@register.filter
def listener_groups(values) -> str:
    """Several groups, labelled and joined: ``["american", "chinese"]`` -> "American, Chinese"."""
    return ", ".join(group_label(value) for value in values or [])
