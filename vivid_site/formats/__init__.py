"""One date format per language, always with the time zone (settings.FORMAT_MODULE_PATH).

Templates show datetimes only through these names (``|date:"DATETIME_FORMAT"``); JSON, CSV and
the API keep ISO 8601.
"""
