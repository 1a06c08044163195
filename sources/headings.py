"""The headings manga sites print beside a detail's values, in their languages, for `:contains()` selectors."""

from __future__ import annotations

# Headings as the families' sites print them in their languages (en, es, pt, tr, id, fr, it, vi, ar, th, ru, zh,
# ja): the per-site overrides of the long-maintained multi-source scrapers name these. `:contains` is
# case-insensitive and matches within words ("Status" also finds "Statüsü").
STATUS_HEADINGS = (
    "Status", "Estado", "Situação", "Durum", "Statut", "Stato", "Trạng thái", "الحالة", "حالة العمل", "สถานะ",
    "Статус", "状态", "連載状況",
)  # fmt: skip
AUTHOR_HEADINGS = (
    "Author", "Autor", "Auteur", "Autore", "Yazar", "Pengarang", "Penulis", "seniman", "Mangaka", "Tác giả",
    "المؤلف", "ผู้แต่ง", "Автор", "作者",
)  # fmt: skip
ALT_HEADINGS = (
    "Alt", "Otros nombres", "Outros nomes", "Nombres", "Diğer", "Autres noms", "Tên khác", "Nama lain",
    "أسماء أخرى", "الأسماء الثانوية", "ชื่ออื่น", "Другие названия", "别名",
)  # fmt: skip


def any_heading(template: str, words: tuple[str, ...]) -> str:
    """`template` (with `%s` for the heading word) once per word, as one selector list."""
    return ", ".join(template.replace("%s", word) for word in words)
