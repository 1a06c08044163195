"""Child process for the read-progress race: records page reads of one chapter for one user, as PSE fetches do.

python progress_race_child.py USER_ID CHAPTER_ID PAGE_COUNT SEED
    Prints "ready", waits for "go" on stdin, then records pages 1..PAGE_COUNT in an order shuffled by SEED
    (each a separate statement on this process's own connection) and prints "done".
"""

from __future__ import annotations

import os
import random
import sys


def main(user_id: str, chapter_id: str, page_count: str, seed: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from catalog.models import Chapter
    from reader.progress import record_page_read

    user = get_user_model().objects.get(pk=user_id)
    chapter = Chapter.objects.get(pk=chapter_id)
    pages = list(range(1, int(page_count) + 1))
    random.Random(seed).shuffle(pages)
    print("ready", flush=True)
    sys.stdin.readline()
    for page in pages:
        record_page_read(user=user, chapter=chapter, page_number=page, page_count=int(page_count))
    print("done", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
