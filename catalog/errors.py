"""Errors the catalog raises for the apps built on it to tell apart."""


class ImageRejected(Exception):
    """Bytes offered as an image are not acceptable: wrong type, over the byte cap, cut short.

    Nothing is left in storage when it is raised. The adapters re-export it in
    `sources.errors`; a rejected download is an ordinary failed attempt there.
    """
