"""Create the organisers group and store the engine's preset variants."""

from django.db import migrations


def forwards(apps, schema_editor):
    from engine import PRESET_NOTES, PRESETS

    Group = apps.get_model("auth", "Group")
    Group.objects.get_or_create(name="organisers")
    Variant = apps.get_model("tournaments", "Variant")
    for name, variant in PRESETS.items():
        Variant.objects.update_or_create(
            name=name,
            defaults={
                "options": variant.to_dict(),
                "base": name,
                "is_preset": True,
                "description": PRESET_NOTES.get(name, ""),
            },
        )


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
