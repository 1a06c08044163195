"""The console's parts of the Django admin, added to each app's own admins (never re-registered).

Every action here is an operator's (`console.control.operators`): Django lists
and runs it only for users with `crawler.operate_crawler`, and it calls the
same `console.control` function as the admin API and the dashboard, so all
faces audit and behave alike. `install()` runs from `ConsoleConfig.ready()`;
the admins read their extensions per request, so app order does not matter.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from analysis.admin import PageAnalysisAdmin
from catalog.admin import ChapterAdmin, MangaAdmin, SourceAdmin
from console.admin import actions, sources
from console.control.operators import can_operate
from crawler.admin import SourceThrottleAdmin
from jobs.admin import JobAdmin


def operator(request: HttpRequest) -> bool:
    """The check behind `permissions=["operate"]` on every console action."""
    return can_operate(request.user)


OPERATE = {"operate": operator}


def install() -> None:
    """Add the console's actions, columns and source editor to the apps' admins; link the console's pages."""
    JobAdmin.extend(
        actions=(actions.requeue_dead, actions.release, actions.force_analyze_jobs),
        columns=[("state", actions.job_label)],
        searches=[actions.job_search],
        permissions=OPERATE,
        search_help_text=actions.JOB_SEARCH_HELP,
    )
    MangaAdmin.extend(actions=[actions.requeue_manga_chapters], permissions=OPERATE)
    ChapterAdmin.extend(actions=[actions.requeue_selected_chapters], permissions=OPERATE)
    SourceThrottleAdmin.extend(actions=[actions.end_cooldown], permissions=OPERATE)
    PageAnalysisAdmin.extend(actions=[actions.force_analyze_pages], permissions=OPERATE)
    SourceAdmin.extend(
        actions=(sources.download_all, sources.download_followed),
        columns=[(None, sources.download)],
        permissions=OPERATE,
    )
    SourceAdmin.editor = sources.OperatorSourceEditor()
    # The admin's home page links the console's own pages (dashboard, and Sources for operators).
    admin.site.index_template = "admin/console_index.html"
