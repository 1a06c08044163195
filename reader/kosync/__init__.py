"""KOReader progress sync ("kosync"): the protocol of koreader/koreader-sync-server under /kosync/.

KOReader names a book by a digest of its file; `digest` computes the same
digests while a CBZ streams out, `documents` remembers which chapter each
names, and `views` answers the sync plugin with the user's read progress.
"""
