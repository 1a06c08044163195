"""The one way a stored image (page, cover, thumbnail, scaled copy) is answered, whichever reader asks.

Every reader (the web reader, OPDS/PSE, the Komga API, the REST API) hands
the name it found to `responder.serve_stored` after its own permission
check, so they all answer with the same headers: `Cache-Control: private`,
the ETag and its 304, Content-Length, byte ranges (206/416), and the bytes
streamed from local storage and S3 alike, or handed to nginx
(`X-Accel-Redirect`, `SERVE_ACCEL_REDIRECT`).
"""
