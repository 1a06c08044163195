"""nginx for bench/serve.py: the stored files served directly, or in front of the web process with the hand-off.

Runs as bench/crawling/serve.py's nginx does (its runner and the shared parts of the configuration). The
front's configuration is the one docs/serving.md documents: an internal `/protected/` location over
MEDIA_ROOT for `X-Accel-Redirect`, web reader pages by signed URL checked and sent by nginx itself
(`signed_location`, the block docs/serving.md shows), everything else proxied to the web process over
kept-alive connections.
"""

from __future__ import annotations

from pathlib import Path

from crawling.serve import Nginx, nginx_http_common, nginx_main

# The headers the web process gives a page (catalog.serving, Django's security middleware), for nginx to add.
PAGE_HEADERS = (
    ("Cache-Control", '"private, max-age=86400"'),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
)
SIGNED_PAGE = (
    r'"^/signed/pages/(?<sl_mac>[A-Za-z0-9_-]{22})/(?<sl_expires>[0-9]{1,12})'
    r'/(?<sl_who>[1-9][0-9]{0,18}/[0-9a-f]{64})/(?<sl_name>[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*\.(?:jpg|png|webp|gif|avif))$"'
)


def signed_location(media_root: str, key: str, indent: str = "    ") -> str:
    """The location that checks a web reader page's signed URL (catalog/serving/signing.py, nginx form) and sends
    the file from MEDIA_ROOT: no request reaches the web process. As docs/serving.md shows it."""
    headers = "".join(f"{indent}    add_header {name} {value} always;\n" for name, value in PAGE_HEADERS)
    return (
        f"{indent}location ~ {SIGNED_PAGE} {{\n"
        f"{indent}    secure_link $sl_mac,$sl_expires;\n"
        f'{indent}    secure_link_md5 "pages/$sl_expires/$sl_who/$sl_name {key}";\n'
        f'{indent}    if ($secure_link != "1") {{ return 403; }}    # forged or expired: the same answer\n'
        f"{indent}    alias {media_root.rstrip('/')}/$sl_name;\n"
        f"{indent}    types {{ image/jpeg jpg; image/png png; image/webp webp; image/gif gif; image/avif avif; }}\n"
        f"{headers}"
        f"{indent}}}\n"
    )


def config(prefix: Path, port: int, media_root: Path, upstream: int | None, signing_key: str = "") -> str:
    if upstream is None:
        locations = f"        location /media/ {{ alias {media_root}/; }}\n"
        upstream_block = ""
    else:
        upstream_block = f"    upstream mangalord {{ server 127.0.0.1:{upstream}; keepalive 32; }}\n"
        signed = signed_location(str(media_root), signing_key, indent="        ") if signing_key else ""
        locations = (
            signed + f"        location /protected/ {{ internal; alias {media_root}/; }}\n"
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


def start(prefix: Path, port: int, media_root: Path, *, upstream: int | None = None, signing_key: str = "") -> Nginx:
    """nginx on `port`: MEDIA_ROOT at /media/, or (with `upstream`) the front of the web process on that port,
    checking signed page URLs itself when given the `signing_key`."""
    return Nginx(prefix, [port], config(prefix, port, media_root, upstream, signing_key))
