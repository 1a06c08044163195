"""A WordPress blog on a stock theme (Twenty Twenty-Four): a site no manga preset fits, for theme detection."""

from __future__ import annotations

from testsupport.theme_sites.server import FixtureServer, Request, Response, html, not_found

HOME = """<!DOCTYPE html><html lang="en-US"><head><meta charset="UTF-8"><title>Plain Blog</title>
<link rel='stylesheet' id='twentytwentyfour-style-css' href='/wp-content/themes/twentytwentyfour/style.css'>
</head><body class="home blog wp-embed-responsive">
<div class="wp-site-blocks"><header class="wp-block-template-part"><h1 class="wp-block-site-title">Plain Blog</h1>
</header><main class="wp-block-group"><ul class="wp-block-post-template">
<li class="wp-block-post post-12 post type-post"><h2 class="wp-block-post-title"><a href="/hello-world/">Hello
world</a></h2><div class="wp-block-post-excerpt"><p>Chapter one of my travel notes.</p></div></li>
</ul><nav class="wp-block-query-pagination"><a class="wp-block-query-pagination-next" href="/page/2/">Next</a></nav>
</main></div></body></html>"""


class PlainSite:
    def __init__(self) -> None:
        self.server = FixtureServer(self.route, "plain-site")
        self.base_url = self.server.base_url

    def route(self, request: Request) -> Response:
        return html(HOME) if request.path == "/" else not_found()

    def stop(self) -> None:
        self.server.stop()
