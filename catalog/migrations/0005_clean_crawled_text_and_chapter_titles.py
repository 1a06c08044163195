"""Existing rows follow the rules new crawls follow: crawled text without XML-invalid or bidi-control
characters (catalog.text), and a chapter's title without the site's label (catalog.chapter_names)."""

from django.db import migrations

from catalog.chapter_names import own_title
from catalog.text import clean_text

BATCH = 2000


def _clean_list(values):
    return [clean_text(v) for v in values if isinstance(v, str) and clean_text(v).strip()]


def forwards(apps, schema_editor):
    Manga = apps.get_model("catalog", "Manga")
    Chapter = apps.get_model("catalog", "Chapter")
    Tag = apps.get_model("catalog", "Tag")
    fields = ["title", "alt_titles", "description", "authors"]
    changed = []
    for manga in Manga.objects.only("id", *fields).iterator(chunk_size=BATCH):
        before = [manga.title, manga.alt_titles, manga.description, manga.authors]
        manga.title = clean_text(manga.title) or manga.title
        manga.alt_titles = _clean_list(manga.alt_titles or [])
        manga.description = clean_text(manga.description)
        manga.authors = _clean_list(manga.authors or [])
        if [manga.title, manga.alt_titles, manga.description, manga.authors] != before:
            changed.append(manga)
        if len(changed) >= BATCH:
            Manga.objects.bulk_update(changed, fields)
            changed = []
    Manga.objects.bulk_update(changed, fields)

    changed = []
    for chapter in Chapter.objects.exclude(title="").only("id", "number", "title").iterator(chunk_size=BATCH):
        title = own_title(clean_text(chapter.title), chapter.number)
        if title != chapter.title:
            chapter.title = title
            changed.append(chapter)
        if len(changed) >= BATCH:
            Chapter.objects.bulk_update(changed, ["title"])
            changed = []
    Chapter.objects.bulk_update(changed, ["title"])

    for tag in list(Tag.objects.all()):
        name = clean_text(tag.name).strip()
        if name == tag.name:
            continue
        keeper = Tag.objects.filter(name=name).first() if name else None
        if keeper is None and name:
            tag.name = name
            tag.save(update_fields=["name"])
            continue
        if keeper is not None:  # the cleaned name exists already: its mangas take that tag
            keeper.mangas.add(*tag.mangas.all())
        tag.delete()


class Migration(migrations.Migration):
    dependencies = [("catalog", "0004_title_search_length_indexes")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
