"""KOReader's document ids, computed the way KOReader computes them.

"Binary" (KOReader's default) is `util.partialMD5` (frontend/util.lua): the
MD5 of 1024-byte samples read at offsets `bit.lshift(1024, 2*i)` for
i = -1..10, stopping at the first offset past the end. LuaJIT masks the
shift count to 5 bits, so i = -1 shifts by 30 and the 32-bit result is 0:
the offsets are 0, 1 KiB, 4 KiB, 16 KiB, ... 1 GiB. "Filename" is the MD5 of
the file's base name.

`PartialMD5` takes the file as the chunks it is streamed in, so the digest
of a CBZ is known the moment its last byte is sent, without storing it.
"""

from __future__ import annotations

import hashlib

SAMPLE_SIZE = 1024
SAMPLE_OFFSETS = (0, *(1024 << (2 * i) for i in range(11)))


def filename_digest(filename: str) -> str:
    return hashlib.md5(filename.encode()).hexdigest()


class PartialMD5:
    """Feed the file's bytes in order with `update`; `hexdigest` once the whole file went through."""

    def __init__(self) -> None:
        self._md5 = hashlib.md5()
        self._position = 0
        self._sample = 0  # index of the next offset still to (finish) sampling

    def update(self, chunk: bytes) -> None:
        start, end = self._position, self._position + len(chunk)
        while self._sample < len(SAMPLE_OFFSETS):
            wanted_from = SAMPLE_OFFSETS[self._sample]
            wanted_to = wanted_from + SAMPLE_SIZE
            if wanted_from >= end:
                break
            lo, hi = max(wanted_from, start), min(wanted_to, end)
            if lo < hi:
                self._md5.update(chunk[lo - start : hi - start])
            if wanted_to > end:
                break  # the rest of this sample is in the next chunk
            self._sample += 1
        self._position = end

    def hexdigest(self) -> str:
        return self._md5.hexdigest()
