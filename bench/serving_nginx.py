"""nginx for bench/serve.py: the stored files served directly, or in front of the web process with the hand-off.

Runs as bench/crawling/serve.py's nginx does (its runner and the shared parts of the configuration). The
front's configuration is the one docs/serving.md documents: an internal `/protected/` location over
MEDIA_ROOT for `X-Accel-Redirect`, everything else proxied to the web process over kept-alive connections.
"""

from __future__ import annotations

from pathlib import Path

from crawling.serve import Nginx, nginx_http_common, nginx_main


def config(prefix: Path, port: int, media_root: Path, upstream: int | None) -> str:
    if upstream is None:
        locations = f"        location /media/ {{ alias {media_root}/; }}\n"
        upstream_block = ""
    else:
        upstream_block = f"    upstream mangalord {{ server 127.0.0.1:{upstream}; keepalive 32; }}\n"
        locations = (
            f"        location /protected/ {{ internal; alias {media_root}/; }}\n"
            "        location / {\n"
            "            proxy_pass http://mangalord;\n"
            "            proxy_http_version 1.1;\n"
            '            proxy_set_header Connection "";\n'
            "            proxy_set_header Host $host;\n"
            "            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n"
            "            proxy_set_header X-Forwarded-Proto $scheme;\n"
            "        }\n"
        )
    return f"""{nginx_main(prefix)}http {{
    types {{ image/jpeg jpg; image/png png; image/webp webp; image/gif gif; image/avif avif; }}
{nginx_http_common(prefix)}    access_log off;
{upstream_block}    server {{
        listen 127.0.0.1:{port} backlog=4096;
{locations}    }}
}}
"""


def start(prefix: Path, port: int, media_root: Path, *, upstream: int | None = None) -> Nginx:
    """nginx on `port`: MEDIA_ROOT at /media/, or (with `upstream`) the front of the web process on that port."""
    return Nginx(prefix, [port], config(prefix, port, media_root, upstream))
