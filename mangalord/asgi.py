"""ASGI entry point: the web process (Granian, or Daphne) serves plain HTTP (including the SSE stream) through Django.

Signed page URLs are answered before Django sees them (mangalord/signed_routes.py).

With `SERVE_STATIC` (the default) the admin's and dashboard's static files are
served by this process too, so a plain `daphne mangalord.asgi:application`
is a complete site; behind a reverse proxy that serves `collectstatic`'s
output, turn it off.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")

from mangalord.startup import load_settings  # noqa: E402

load_settings()  # a bad variable stops daphne with one line, not a traceback

from mangalord.log_masking import mask_daphne_access_log  # noqa: E402

mask_daphne_access_log()  # daphne builds its access-log writer after importing this module

from channels.routing import ProtocolTypeRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

from mangalord.sync_routes import SyncRoutes  # noqa: E402

# Page and cover reads run whole in one worker thread (mangalord/sync_routes.py); everything else is ASGI.
django_asgi_app = SyncRoutes(get_asgi_application(), get_wsgi_application(), threads=settings.WEB_DB_POOL_SIZE)
http_app = ASGIStaticFilesHandler(django_asgi_app) if settings.SERVE_STATIC else django_asgi_app
# Signed page URLs are answered ahead of Django, PSE's in the same worker threads (mangalord/signed_routes.py),
# which reads the models: imported once Django is set up.
from mangalord.signed_routes import SignedRoutes  # noqa: E402

signed_app = SignedRoutes(http_app, pool=django_asgi_app.pool)

application = ProtocolTypeRouter({"http": signed_app})
