"""`manage.py serve`: the production web process (mangalord/web_server.py), one worker per core by default."""

from __future__ import annotations

import os

from django.core.management.base import BaseCommand

from jobs.commands import positive_int
from mangalord.web_server import default_workers, granian_argv, web_process_env


class Command(BaseCommand):
    help = "Serve the site (admin, dashboard and its event stream, readers, APIs, static files) with Granian."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=positive_int, default=8000, help="port to listen on (default 8000)")
        parser.add_argument(
            "--workers", type=positive_int, default=None, help="worker processes (default: one per core)"
        )

    def handle(self, *args, **options):
        argv = granian_argv(options["addr"], options["port"], options["workers"] or default_workers())
        os.execve(argv[0], argv, web_process_env(os.environ))  # the server replaces this process: signals reach it
