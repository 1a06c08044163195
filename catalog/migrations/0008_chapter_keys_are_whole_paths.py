"""Chapters stored under the html adapter's old default key (the URL's last segment) take the whole-path key.

The adapter used to key chapters by the last path segment, so "chapter-1" of
every manga collided; it now keys them by the whole path
("manga/slug/chapter-1"). A stored chapter of an html source that sets no
`chapter_key_pattern`, whose key has no "/" and is the last segment of its own
URL, is renamed to that URL's path once, here, so the next chapter sync finds
it (downloads kept) instead of inserting it again. A row whose new key
another row of its source already holds is left as it is.
"""

from urllib.parse import urlsplit

from django.db import migrations
from django.utils import timezone

BATCH = 2000


def whole_path_key(key, url):
    """The whole-path key of a chapter stored under `key` at `url`, or None when `key` is not its old default."""
    segments = [s for s in urlsplit(url).path.split("/") if s]
    if len(segments) < 2 or segments[-1] != key:
        return None
    return "/".join(segments)


def forwards(apps, schema_editor):
    Source = apps.get_model("catalog", "Source")
    Chapter = apps.get_model("catalog", "Chapter")
    defaults = [s.id for s in Source.objects.filter(kind="html") if not (s.settings or {}).get("chapter_key_pattern")]
    for source_id in defaults:
        candidates = (
            Chapter.objects.filter(source_id=source_id)
            .exclude(source_chapter_key__contains="/")
            .exclude(url="")
            .values_list("id", "source_chapter_key", "url")
        )
        renames = {}
        claimed = {}
        for chapter_id, key, url in candidates.iterator(chunk_size=BATCH):
            new = whole_path_key(key, url)
            if new is not None:
                renames[chapter_id] = new
                claimed[new] = claimed.get(new, 0) + 1
        news = list(renames.values())
        taken = set()
        for start in range(0, len(news), BATCH):
            chunk = news[start : start + BATCH]
            taken |= set(
                Chapter.objects.filter(source_id=source_id, source_chapter_key__in=chunk).values_list(
                    "source_chapter_key", flat=True
                )
            )
        now = timezone.now()
        changed = [
            Chapter(id=chapter_id, source_chapter_key=new, updated_at=now)
            for chapter_id, new in renames.items()
            if new not in taken and claimed[new] == 1
        ]
        Chapter.objects.bulk_update(changed, ["source_chapter_key", "updated_at"], batch_size=BATCH)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0007_keyset_paging_indexes")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
