"""Every GraphQL document the Suwayomi adapter sends, validated against the recorded schemas by the tests.

The crawl's documents are valid against the oldest and the newest recorded
server (r1353 and r2320); `ABOUT` and `LOGIN` need newer servers (`ABOUT_LEGACY`
is asked where `ABOUT` is refused; `login` exists only where UI_LOGIN does).

Fields chosen exist in every server the adapter supports: `isNsfw` (deprecated
for `contentWarning` in newer servers, still answered) rather than
`contentWarning`, which older servers lack.
"""

from __future__ import annotations

ABOUT = """
query About {
  aboutServer { name version }
}
"""

# Servers before `aboutServer` (r1353 and its time) answer the same as `about`.
ABOUT_LEGACY = """
query AboutLegacy {
  about { name version }
}
"""

LOGIN = """
mutation Login($username: String!, $password: String!) {
  login(input: {username: $username, password: $password}) { accessToken }
}
"""

SOURCES = """
query Sources {
  sources { nodes { id name displayName lang isNsfw supportsLatest } }
}
"""

# A source named by id: the server filters, so the answer is one source, not every installed one.
SOURCE_BY_ID = """
query SourceById($id: LongString!) {
  sources(condition: {id: $id}) { nodes { id name displayName lang isNsfw supportsLatest } }
}
"""

EXTENSIONS = """
query Extensions($name: String!) {
  extensions(condition: {name: $name}) { nodes { pkgName name lang isInstalled } }
}
"""

_MANGA_FIELDS = """
  id title url realUrl thumbnailUrl description author artist genre status
"""

SOURCE_MANGA = f"""
mutation SourceManga($source: LongString!, $type: FetchSourceMangaType!, $page: Int!, $query: String) {{
  fetchSourceManga(input: {{source: $source, type: $type, page: $page, query: $query}}) {{
    hasNextPage
    mangas {{ {_MANGA_FIELDS} }}
  }}
}}
"""

MANGA = f"""
mutation Manga($id: Int!) {{
  fetchManga(input: {{id: $id}}) {{ manga {{ {_MANGA_FIELDS} }} }}
}}
"""

CHAPTERS = """
mutation Chapters($mangaId: Int!) {
  fetchChapters(input: {mangaId: $mangaId}) {
    chapters { id mangaId name url realUrl chapterNumber scanlator uploadDate sourceOrder }
  }
}
"""

CHAPTER_PAGES = """
mutation ChapterPages($chapterId: Int!) {
  fetchChapterPages(input: {chapterId: $chapterId}) { pages }
}
"""

ALL = {
    "About": ABOUT,
    "AboutLegacy": ABOUT_LEGACY,
    "Login": LOGIN,
    "Sources": SOURCES,
    "SourceById": SOURCE_BY_ID,
    "Extensions": EXTENSIONS,
    "SourceManga": SOURCE_MANGA,
    "Manga": MANGA,
    "Chapters": CHAPTERS,
    "ChapterPages": CHAPTER_PAGES,
}
