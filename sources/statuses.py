"""A manga's publication status as sites print it, in the languages of the theme families' sites.

Sites of one theme print the same status in their own language ("OnGoing",
"En curso", "Em andamento", "Berjalan", "Devam Ediyor", "กำลังดำเนินการ",
"連載中"), under a heading in that language too. The adapter reads every
candidate value a preset's status spec yields and keeps the first that names
a status: an exact word first, then a word inside a short value ("Status:
Completed"), so a long title that merely contains "finished" is not taken.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

UNKNOWN = "unknown"
_WORDS: dict[str, tuple[str, ...]] = {
    "ongoing": (
        "ongoing", "on going", "publishing", "releasing", "updating", "serialization", "en curso", "en emision",
        "en emisión", "emision", "publicandose", "publicándose", "publicando", "en marcha", "activo", "em andamento",
        "em lançamento", "lançando", "em curso", "ativo", "em postagem", "em progresso", "en cours",
        "en cours de publication", "in corso", "in arrivo", "berjalan", "on-going", "devam ediyor", "devam ediyo",
        "devam etmekte", "devam eden", "güncel", "đang tiến hành", "đang ra", "đang cập nhật", "مستمرة", "مستمر",
        "กำลังดำเนินการ", "ยังไม่จบ", "продолжается", "выпускается", "онгоінг", "连载中", "連載中", "連載",
    ),
    "completed": (
        "completed", "complete", "finished", "ended", "one-shot", "oneshot", "finalizado", "finalizada",
        "completado", "completo", "terminado", "concluído", "concluido", "completa", "terminé", "achevé",
        "complété", "fini", "completata", "conclusa", "terminato", "tamat", "selesai", "tamamlandı", "tamamlanan",
        "bitti", "bitmiş", "hoàn thành", "đã hoàn thành", "truyện full", "مكتملة", "مكتمل", "จบแล้ว", "จบ",
        "завершено", "завершён", "已完结", "完結", "完结",
    ),
    "hiatus": (
        "hiatus", "on hold", "paused", "pausado", "en espera", "en pausa", "hiato", "en pause", "en attente",
        "in pausa", "beklemede", "durduruldu", "ara verildi", "đang chờ", "tạm ngưng", "متوقف", "หยุดชั่วคราว",
        "заморожено", "приостановлено", "休刊", "暂停",
    ),
    "cancelled": (
        "cancelled", "canceled", "dropped", "discontinued", "cancelado", "cancelada", "abandonado", "cancelados",
        "abandonné", "annulé", "cancellato", "iptal edildi", "bırakıldı", "dihentikan", "đã hủy", "ملغي",
        "ยกเลิก", "заброшено", "прекращено", "腰斩",
    ),
}  # fmt: skip
_EXACT = {word: status for status, words in _WORDS.items() for word in words}
# Longest first, so "on hold" wins over a shorter word inside it, and "en cours de publication" over "en cours".
_SEARCH = sorted(_EXACT.items(), key=lambda item: -len(item[0]))
_MAX_WORDS = 6  # a status value is a word or three; longer text (a title, a synopsis) is not read for one


def _clean(text: str) -> str:
    """Case-folded, punctuation and symbols to spaces (Thai and other combining marks stay: they are letters)."""
    kept = (" " if unicodedata.category(ch)[0] in "PSZC" and ch != "-" else ch for ch in text.casefold())
    return " ".join("".join(kept).split())


def normalise_status(text: str) -> str:
    """One printed status ("OnGoing", "En curso", "Status: Completed") mapped to ours; else unknown."""
    cleaned = _clean(text)
    if not cleaned:
        return UNKNOWN
    if cleaned in _EXACT:
        return _EXACT[cleaned]
    if len(cleaned.split()) > _MAX_WORDS:
        return UNKNOWN
    for word, status in _SEARCH:
        if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", cleaned):
            return status
    return UNKNOWN


def status_of(values: Iterable[str]) -> str:
    """The status named by the first candidate value that names one, exact words before words inside values."""
    candidates = [_clean(value) for value in values]
    for cleaned in candidates:
        if cleaned in _EXACT:
            return _EXACT[cleaned]
    for value in candidates:
        found = normalise_status(value)
        if found != UNKNOWN:
            return found
    return UNKNOWN
