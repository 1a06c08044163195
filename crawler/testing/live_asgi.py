"""The project's ASGI application with static files served, for a test or benchmark Daphne.

Daphne serves no static files (production puts them behind the web server
after `collectstatic`); the live-server tests need the dashboard's JS and
CSS, so they run this wrapper instead of `mangalord.asgi` directly.
"""

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

from mangalord.asgi import application as project_application

application = ASGIStaticFilesHandler(project_application)
