"""How the theme fixture sites print things in the languages the families' sites use.

Each locale is what sites of that language print, as the per-site overrides
of the long-maintained Mihon extensions (keiyoushi/extensions-source, e.g.
`src/es/*`, `src/pt/*`, `src/id/*`, `src/tr/*`, `src/th/*`, `src/fr/*` with
`theme = "madara"` or `"mangathemesia"`) describe them: `<html lang>`, the
detail page's headings, the status words (their `*StatusList`s), the
chapter label, month names and date order (their `dateFormat` overrides:
"MMMM dd, yyyy" with the site's locale, "dd/MM/yyyy", Thai sites' Buddhist
years), and the relative phrases new chapters carry ("hace 2 días").
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

_EN_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December",
)  # fmt: skip


@dataclass(frozen=True)
class SiteLocale:
    code: str  # what <html lang> says
    chapter: str  # the chapter label word
    headings: dict[str, str]  # "status", "alt", "author" -> the detail page's heading
    statuses: dict[str, str]  # our status -> the word printed
    relative: dict[str, str]  # the English phrase of catalog.py -> this language's
    months: tuple[str, ...] = _EN_MONTHS
    date_order: str = "month-name"  # "month-name" ("November 12, 2026"), "day-month" ("12 de noviembre de 2026"),
    # or numeric "dd/MM/yyyy" / "MM/dd/yyyy"
    year_offset: int = 0  # Thai sites print the Buddhist era (2026 + 543)

    @property
    def language(self) -> str:
        """The date parser's code for the language: what a probe should find."""
        return self.code.split("-")[0].lower()

    def calendar(self, moment: dt.datetime) -> str:
        year, month, day = moment.year + self.year_offset, self.months[moment.month - 1], moment.day
        if self.date_order == "dd/MM/yyyy":
            return f"{day:02d}/{moment.month:02d}/{year}"
        if self.date_order == "MM/dd/yyyy":
            return f"{moment.month:02d}/{day:02d}/{year}"
        if self.date_order == "day-month":
            return f"{day} de {month} de {year}" if self.language in ("es", "pt") else f"{day} {month} {year}"
        return f"{month} {day:02d}, {year}"

    def label(self, number: object) -> str:
        return f"{self.chapter} {number}"


ENGLISH = SiteLocale(
    code="en-US",
    chapter="Chapter",
    headings={"status": "Status", "alt": "Alternative", "author": "Author(s)"},
    statuses={"ongoing": "OnGoing", "completed": "Completed", "hiatus": "On Hold", "cancelled": "Canceled"},
    relative={"2 days ago": "2 days ago", "an hour ago": "an hour ago", "yesterday": "yesterday"},
)
SPANISH = SiteLocale(
    code="es-ES",
    chapter="Capítulo",
    headings={"status": "Estado", "alt": "Otros nombres", "author": "Autor(es)"},
    statuses={"ongoing": "En curso", "completed": "Finalizado", "hiatus": "En pausa", "cancelled": "Cancelado"},
    relative={"2 days ago": "hace 2 días", "an hour ago": "hace 1 hora", "yesterday": "ayer"},
    months=(
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ),  # fmt: skip
)
PORTUGUESE = SiteLocale(
    code="pt-BR",
    chapter="Capítulo",
    headings={"status": "Status", "alt": "Alternativo", "author": "Autor(es)"},
    statuses={"ongoing": "Em andamento", "completed": "Completo", "hiatus": "Hiato", "cancelled": "Cancelado"},
    relative={"2 days ago": "há 2 dias", "an hour ago": "há 1 hora", "yesterday": "ontem"},
    months=(
        "janeiro",
        "fevereiro",
        "março",
        "abril",
        "maio",
        "junho",
        "julho",
        "agosto",
        "setembro",
        "outubro",
        "novembro",
        "dezembro",
    ),  # fmt: skip
    date_order="dd/MM/yyyy",
)
INDONESIAN = SiteLocale(
    code="id-ID",
    chapter="Chapter",
    headings={"status": "Status", "alt": "Alternatif", "author": "Pengarang"},
    statuses={"ongoing": "Berjalan", "completed": "Tamat", "hiatus": "Hiatus", "cancelled": "Dihentikan"},
    relative={"2 days ago": "2 hari yang lalu", "an hour ago": "1 jam yang lalu", "yesterday": "kemarin"},
    months=(
        "Januari",
        "Februari",
        "Maret",
        "April",
        "Mei",
        "Juni",
        "Juli",
        "Agustus",
        "September",
        "Oktober",
        "November",
        "Desember",
    ),  # fmt: skip
    date_order="day-month",
)
TURKISH = SiteLocale(
    code="tr-TR",
    chapter="Bölüm",
    headings={"status": "Durum", "alt": "Diğer Adları", "author": "Yazar"},
    statuses={"ongoing": "Devam Ediyor", "completed": "Tamamlandı", "hiatus": "Ara Verildi", "cancelled": "Bırakıldı"},
    relative={"2 days ago": "2 gün önce", "an hour ago": "1 saat önce", "yesterday": "dün"},
    months=(
        "Ocak",
        "Şubat",
        "Mart",
        "Nisan",
        "Mayıs",
        "Haziran",
        "Temmuz",
        "Ağustos",
        "Eylül",
        "Ekim",
        "Kasım",
        "Aralık",
    ),  # fmt: skip
)
THAI = SiteLocale(
    code="th",
    chapter="ตอนที่",
    headings={"status": "สถานะ", "alt": "ชื่ออื่น", "author": "ผู้แต่ง"},
    statuses={"ongoing": "กำลังดำเนินการ", "completed": "จบแล้ว", "hiatus": "หยุดชั่วคราว", "cancelled": "ยกเลิก"},
    relative={"2 days ago": "2 วันที่แล้ว", "an hour ago": "1 ชั่วโมงที่แล้ว", "yesterday": "เมื่อวาน"},
    months=(
        "มกราคม",
        "กุมภาพันธ์",
        "มีนาคม",
        "เมษายน",
        "พฤษภาคม",
        "มิถุนายน",
        "กรกฎาคม",
        "สิงหาคม",
        "กันยายน",
        "ตุลาคม",
        "พฤศจิกายน",
        "ธันวาคม",
    ),  # fmt: skip
    year_offset=543,
)
FRENCH = SiteLocale(
    code="fr-FR",
    chapter="Chapitre",
    headings={"status": "Statut", "alt": "Autres noms", "author": "Auteur(s)"},
    statuses={"ongoing": "En cours", "completed": "Terminé", "hiatus": "En pause", "cancelled": "Abandonné"},
    relative={"2 days ago": "il y a 2 jours", "an hour ago": "il y a 1 heure", "yesterday": "hier"},
    months=(
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ),  # fmt: skip
    date_order="day-month",
)
US_NUMERIC = SiteLocale(
    code="en-US",
    chapter="Chapter",
    headings=ENGLISH.headings,
    statuses=ENGLISH.statuses,
    relative=ENGLISH.relative,
    date_order="MM/dd/yyyy",
)
LOCALES = {locale.language: locale for locale in (ENGLISH, SPANISH, PORTUGUESE, INDONESIAN, TURKISH, THAI, FRENCH)}
