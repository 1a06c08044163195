"""The demo: `manage.py demo` (a whole Mangalord on one machine in one command), `manage.py demo_site` and the
built-in demo manga site the demo and the test suite crawl. It stands on every app; no app stands on it."""
