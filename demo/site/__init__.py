"""A built-in demo manga site served over real HTTP, with switches for every fault the crawler must survive."""

from demo.site.catalog import DemoCatalog, DemoChapter, DemoManga
from demo.site.faults import DemoFaults
from demo.site.server import DemoRequest, DemoSite, start_demo_site

__all__ = [
    "DemoCatalog",
    "DemoChapter",
    "DemoFaults",
    "DemoManga",
    "DemoRequest",
    "DemoSite",
    "start_demo_site",
]
