"""The web servers' commands: `manage.py serve` (the web process, Granian) and `manage.py runserver` served by
Daphne (ASGI: the dashboard's SSE stream works in development too).

Daphne's own app would give the same command, but its `apps.py` imports
`daphne.server` and with it Twisted's reactor (0.1-0.2 s of CPU) in every
process that sets Django up: each crawl worker, each management command.
Only `runserver` needs the server, so here it is imported by the command
alone. The web process itself runs `daphne mangalord.asgi:application`,
which never went through the app.
"""
