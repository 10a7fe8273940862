# Day first, as Vietnamese readers write dates; T is the zone (UTC).
DATE_FORMAT = "d/m/Y"
SHORT_DATE_FORMAT = "d/m/Y"
DATETIME_FORMAT = "d/m/Y H:i T"
SHORT_DATETIME_FORMAT = "d/m/Y H:i T"
