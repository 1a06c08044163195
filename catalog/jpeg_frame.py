"""A JPEG's framing walked without decoding a pixel: the cheap proof that a page arrived whole.

What refuses a page at ingest is nearly always a transfer gone wrong: a body
cut short, an HTML error page, a file whose segments do not add up. Those
show in the framing, which a walk over the markers reads at memory speed,
where a decode (even at 1/8 scale) runs every Huffman code of the file: about
4 ms of CPU for a 285 KiB scan, half of what storing a page costs.

`sound_jpeg_size` vouches for a file only when it is a Huffman-coded JPEG
(baseline, extended or progressive) whose structure is complete and
consistent: SOI first; every segment's length inside the file; one frame
header with 1, 3 or 4 components and a non-zero size; every quantisation and
Huffman table a frame or scan names defined before it is used; each scan's
entropy-coded data non-empty and ending at a marker (only stuffed 0xFF00 and
restart markers inside it); every component covered by some scan; and EOI at
the end of the last scan. Anything else (arithmetic or lossless coding, a
missing EOI, an unknown marker, a table used before it is defined) returns
None and the caller decodes the file as before, so what the decoder refuses
is still refused with the decoder's own words.
"""

from __future__ import annotations

import mmap
import re
import struct

_SOI = b"\xff\xd8"
_EOI = 0xD9
_SOS = 0xDA
_DQT = 0xDB
_DHT = 0xC4
_DRI = 0xDD
_HUFFMAN_FRAMES = frozenset({0xC0, 0xC1, 0xC2})  # baseline, extended sequential, progressive
_SKIPPED = frozenset({*range(0xE0, 0xF0), 0xFE, _DRI})  # APPn, COM, DRI: lengths checked, contents not needed
# Inside entropy-coded data a 0xFF is followed by 0x00 (a stuffed byte) or a restart marker; anything else ends it.
_SCAN_END = re.compile(rb"\xff[^\x00\xd0-\xd7]")


def sound_jpeg_size(path: str) -> tuple[int, int] | None:
    """(width, height) of the JPEG at `path` when its framing proves it whole and consistent, else None."""
    with open(path, "rb") as file:
        try:
            data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            return None
        with data:
            return _walk(data)


def sound_jpeg(data: bytes) -> tuple[int, int] | None:
    """`sound_jpeg_size` of a JPEG's bytes in memory."""
    return _walk(data)


def _walk(data: mmap.mmap | bytes) -> tuple[int, int] | None:
    if data[:2] != _SOI:
        return None
    size = len(data)
    pos = 2
    frame: _Frame | None = None
    quant: set[int] = set()
    huffman: set[tuple[int, int]] = set()
    scanned: set[int] = set()
    while True:
        if pos + 2 > size or data[pos] != 0xFF:
            return None
        while pos + 2 <= size and data[pos + 1] == 0xFF:  # fill bytes before a marker
            pos += 1
        if pos + 2 > size:
            return None
        marker = data[pos + 1]
        if marker == _EOI:
            if frame is None or not scanned or scanned != frame.components:
                return None
            return frame.width, frame.height
        if pos + 4 > size:
            return None
        (length,) = struct.unpack_from(">H", data, pos + 2)
        end = pos + 2 + length
        if length < 2 or end > size:
            return None
        segment = data[pos + 4 : end]
        if marker in _HUFFMAN_FRAMES:
            if frame is not None:
                return None
            frame = _Frame.parse(segment, marker)
            if frame is None:
                return None
        elif marker == _DQT:
            tables = _quant_tables(segment)
            if tables is None:
                return None
            quant |= tables
        elif marker == _DHT:
            tables = _huffman_tables(segment)
            if tables is None:
                return None
            huffman |= tables
        elif marker == _SOS:
            if frame is None or not frame.tables <= quant:
                return None
            components = frame.scan_components(segment, huffman)
            if components is None:
                return None
            scanned |= components
            found = _SCAN_END.search(data, end)
            if found is None or found.start() == end:  # cut off mid-scan, or a scan with no data
                return None
            pos = found.start()
            continue
        elif marker not in _SKIPPED:  # other frame kinds, DAC, DNL, anything unknown: the decoder's call
            return None
        pos = end


class _Frame:
    def __init__(self, progressive: bool, width: int, height: int, ids: dict[int, int]) -> None:
        self.progressive = progressive
        self.width = width
        self.height = height
        self.ids = ids  # component id -> its quantisation table
        self.components = set(ids)
        self.tables = set(ids.values())

    @classmethod
    def parse(cls, segment: bytes, marker: int) -> _Frame | None:
        if len(segment) < 6:
            return None
        precision, height, width, count = struct.unpack_from(">BHHB", segment)
        if precision != 8 or not height or not width or count not in (1, 3, 4) or len(segment) != 6 + 3 * count:
            return None
        ids = {segment[6 + 3 * i]: segment[8 + 3 * i] for i in range(count)}
        if len(ids) != count:
            return None
        return cls(marker == 0xC2, width, height, ids)

    def scan_components(self, segment: bytes, huffman: set[tuple[int, int]]) -> set[int] | None:
        """The components a scan header covers, when each exists and its Huffman tables are defined."""
        if not segment:
            return None
        count = segment[0]
        if not 1 <= count <= 4 or len(segment) != 4 + 2 * count:
            return None
        start, end = segment[1 + 2 * count], segment[2 + 2 * count]
        successive_high = segment[3 + 2 * count] >> 4
        # Which tables a scan decodes with: a sequential scan both; a progressive DC scan its DC table
        # (refinements none); a progressive AC scan its AC table.
        needs_dc = not self.progressive or (start == 0 and successive_high == 0)
        needs_ac = not self.progressive or start > 0
        if not self.progressive and (start != 0 or end != 63):
            return None
        covered = set()
        for i in range(count):
            component, tables = segment[1 + 2 * i], segment[2 + 2 * i]
            if component not in self.ids:
                return None
            if needs_dc and (0, tables >> 4) not in huffman:
                return None
            if needs_ac and (1, tables & 0x0F) not in huffman:
                return None
            covered.add(component)
        return covered


def _quant_tables(segment: bytes) -> set[int] | None:
    tables, pos = set(), 0
    while pos < len(segment):
        precision, table = segment[pos] >> 4, segment[pos] & 0x0F
        if precision > 1 or table > 3:
            return None
        pos += 1 + 64 * (precision + 1)
        tables.add(table)
    return tables if pos == len(segment) and tables else None


def _huffman_tables(segment: bytes) -> set[tuple[int, int]] | None:
    tables, pos = set(), 0
    while pos < len(segment):
        if pos + 17 > len(segment):
            return None
        kind, table = segment[pos] >> 4, segment[pos] & 0x0F
        if kind > 1 or table > 3:
            return None
        symbols = sum(segment[pos + 1 : pos + 17])
        if not symbols:
            return None
        pos += 17 + symbols
        tables.add((kind, table))
    return tables if pos == len(segment) and tables else None
