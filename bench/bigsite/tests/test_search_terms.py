"""The big-site searches look for one manga whose jobs are the same at every size, so only the table grows."""

from __future__ import annotations

import pytest

from bigsite.seed import CHAPTERS_PER_MANGA, DEAD_JOBS, SEARCHED_MANGA, Size, searched_term, title


@pytest.mark.parametrize("mangas", [10_000, 100_000])
def test_each_search_term_names_one_manga_at_every_size(mangas):
    size = Size(mangas)
    titles = [title(n).lower() for n in range(mangas)]
    for manga in (SEARCHED_MANGA, size.dead_manga):
        term = searched_term(manga)
        assert [n for n, t in enumerate(titles) if term in t] == [manga], term


@pytest.mark.parametrize("mangas", [10_000, 100_000])
def test_the_searched_mangas_have_the_same_jobs_at_every_size(mangas):
    size = Size(mangas)
    searched_chapters = range(SEARCHED_MANGA * CHAPTERS_PER_MANGA, (SEARCHED_MANGA + 1) * CHAPTERS_PER_MANGA)
    # Every chapter queued, and downloaded twice before (done jobs go round the chapters).
    assert all(chapter < size.pending for chapter in searched_chapters)
    assert all(chapter + size.chapters < size.done for chapter in searched_chapters)
    # The dead manga: every chapter has a dead job (they start at `pending`) and one done job.
    dead_chapters = range(size.dead_manga * CHAPTERS_PER_MANGA, (size.dead_manga + 1) * CHAPTERS_PER_MANGA)
    assert all(size.pending <= chapter < size.pending + DEAD_JOBS for chapter in dead_chapters)
    assert all(chapter + size.chapters >= size.done for chapter in dead_chapters)


@pytest.mark.parametrize("mangas", [10_000, 100_000])
def test_the_common_word_is_in_nearly_a_fifth_of_the_titles_at_every_size(mangas):
    """The common-word searches: an answer that grows with the library (1,900 then 19,000 mangas: the first or
    the second word of a title, both in one title of a hundred), which the search must cut to what a page shows."""
    from bigsite.operations import COMMON_WORD

    matching = sum(COMMON_WORD in title(n).lower() for n in range(mangas))
    assert matching == mangas * 19 // 100
