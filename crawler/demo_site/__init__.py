"""A built-in demo manga site served over real HTTP, with switches for every fault the crawler must survive."""

from crawler.demo_site.catalog import DemoCatalog, DemoChapter, DemoManga
from crawler.demo_site.faults import DemoFaults
from crawler.demo_site.server import DemoRequest, DemoSite, start_demo_site

__all__ = [
    "DemoCatalog",
    "DemoChapter",
    "DemoFaults",
    "DemoManga",
    "DemoRequest",
    "DemoSite",
    "start_demo_site",
]
