from decimal import Decimal

from django.db import migrations

FIELDS = ("amount", "fees", "vat", "total_amount")


def money_in_major_units(apps, schema_editor):
    """Batches created before Prolific's answer was read in its minor unit hold 100 times their money.
    Such a batch is known by its amount: 100 times the total of its own rows (the file, in the major
    unit); any other batch is left as it is."""
    BonusBatch = apps.get_model("prolific", "BonusBatch")
    for batch in BonusBatch.objects.exclude(prolific_id="").iterator():
        total = sum((Decimal(str(row.get("amount") or 0)) for row in batch.rows or []), Decimal("0"))
        if total <= 0 or batch.amount != total * 100:
            continue
        values = {field: (getattr(batch, field) / 100).quantize(Decimal("0.01")) for field in FIELDS}
        BonusBatch.objects.filter(pk=batch.pk).update(**values)


class Migration(migrations.Migration):
    dependencies = [
        ("prolific", "0002_review_claims"),
    ]

    operations = [migrations.RunPython(money_in_major_units, migrations.RunPython.noop)]
