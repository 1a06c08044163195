"""The pure rules under the Komga API and kosync: parameters, Spring pages, tracker counts, KOReader's reports."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.http import QueryDict

from reader.komga import dto, params
from reader.kosync.protocol import PageProgress, document_progress, page_from_report

pytestmark = pytest.mark.sqlite_ok


def test_list_parameters_come_repeated_or_comma_separated():
    query = QueryDict("library_id=a,b&library_id=c&read_status=unread&read_status=IN_PROGRESS")
    assert params.values(query, "library_id") == ["a", "b", "c"]
    assert params.choices(query, "read_status", params.READ_STATUSES) == ["UNREAD", "IN_PROGRESS"]


def test_an_author_name_may_hold_commas_the_role_follows_the_last_one():
    query = QueryDict("author=Miura, Kentaro,writer&author=CLAMP,penciller")
    assert params.authors(query) == [params.Author("Miura, Kentaro", "writer"), params.Author("CLAMP", "penciller")]
    with pytest.raises(params.BadParam, match="author"):
        params.authors(QueryDict("author=nobody"))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("sort=metadata.titleSort,desc", [params.Sort("metadata.titleSort", True)]),
        ("sort=createdDate", [params.Sort("createdDate", False)]),
        (
            "sort=lastModifiedDate,ASC&sort=name,desc",
            [params.Sort("lastModifiedDate", False), params.Sort("name", True)],
        ),
    ],
)
def test_sorts_are_springs_property_and_direction_pairs(raw, expected):
    assert params.sorts(QueryDict(raw), params.SERIES_SORTS) == expected


@pytest.mark.parametrize("raw", ["sort=rating,asc", "sort=name,up"])
def test_an_unknown_sort_is_refused_by_name(raw):
    with pytest.raises(params.BadParam, match="sort"):
        params.sorts(QueryDict(raw), params.SERIES_SORTS)


def test_paging_is_zero_based_and_unpaged_means_everything():
    assert params.paging(QueryDict("page=3&size=10")) == params.Paging(3, 10, False)
    assert params.paging(QueryDict("")) == params.Paging(0, params.DEFAULT_PAGE_SIZE, False)
    assert params.paging(QueryDict("unpaged=true&page=9")).unpaged


def test_a_spring_page_says_where_it_is():
    page = dto.spring_page(["a", "b"], params.Paging(1, 2, False), 5)
    assert (page["totalPages"], page["first"], page["last"], page["numberOfElements"]) == (3, False, False, 2)
    assert page["pageable"]["offset"] == 2
    last = dto.spring_page(["e"], params.Paging(2, 2, False), 5)
    assert last["last"] and not last["empty"]
    everything = dto.spring_page(["a", "b", "c"], params.Paging(0, 20, True), 3)
    assert (everything["size"], everything["totalPages"], everything["last"]) == (3, 1, True)


def test_tracker_counts_the_run_of_read_chapters_from_the_first():
    numbers = [Decimal(1), Decimal(2), Decimal("2.5"), Decimal(3)]
    progress = dto.tracker_progress(numbers, completed={0, 1, 3}, in_progress={2})
    assert progress == {
        "booksCount": 4,
        "booksReadCount": 3,
        "booksUnreadCount": 0,
        "booksInProgressCount": 1,
        "lastReadContinuousNumberSort": 2.0,
        "maxNumberSort": 3.0,
    }
    assert dto.tracker_progress(numbers, completed={1}, in_progress=set())["lastReadContinuousNumberSort"] == 0.0
    assert dto.tracker_progress([], set(), set())["maxNumberSort"] == 0.0


@pytest.mark.parametrize(
    ("progress", "percentage", "page"),
    [
        ("3", 0.75, 3),
        (4, 1.0, 4),
        (" 2 ", 0.5, 2),
        ("0", 0.0, None),
        ("5", 1.0, None),
        ("/body/DocFragment[2]", 0.3, None),
    ],
)
def test_koreader_reports_a_cbz_page_as_its_number(progress, percentage, page):
    assert page_from_report(progress, percentage, pages=4) == page


def test_a_report_without_a_numeric_percentage_is_refused():
    assert page_from_report("2", None, pages=4) is None
    assert page_from_report(True, 0.5, pages=4) is None


def test_stored_progress_reads_back_as_koreader_wrote_it():
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert document_progress("abc", PageProgress(3, 4, at)) == {
        "document": "abc",
        "progress": "3",
        "percentage": 0.75,
        "device": "Mangalord",
        "device_id": "mangalord",
        "timestamp": int(at.timestamp()),
    }


def test_sizes_read_as_komga_writes_them():
    assert [dto.human_size(n) for n in (0, 1023, 1536, 5 * 1024 * 1024)] == ["0 B", "1023 B", "1.5 KiB", "5.0 MiB"]
