"""What a text file's bytes are: binary content (refused whatever the extension) and, for HTML, the
charset — declared (BOM, HTTP header, ``<meta>``, XML declaration), else detected.

Binary: a NUL byte (no text encoding but UTF-16/32, announced by their BOM, writes one), or more than
:data:`MAX_CONTROL_SHARE` of the bytes sniffed being C0 controls no text uses (``\\x01``-``\\x08``,
``\\x0e``-``\\x1a``, ``\\x1c``-``\\x1f``: tab, line feed, form feed, carriage return and ESC — ISO-2022
— excluded). No legacy 8-bit or multi-byte charset encodes a letter with them, so a text file in any
charset stays under the share; random bytes are about 10 % of them. One stray control in a pasted
text (a backspace) is under it too: that file is read, its control removed.

The HTML charset follows the order browsers follow (WHATWG encoding sniffing) through w3lib's
``html_to_unicode`` (Scrapy's); an undeclared page is UTF-8 when its bytes are, else charset-normalizer
(the detector trafilatura itself depends on, pinned in pyproject) decides, windows-1252 standing for
every Latin-script guess: it cannot tell the Latin code pages apart on a page's worth of text (it read
a French windows-1252 page as cp1257, « déją »), and windows-1252 is the browsers' default for
undeclared pages. Without this, a Latin-1 page became « ╔tķ Ó Paris » (trafilatura's own guess).
"""

from __future__ import annotations

import re
import unicodedata

from charset_normalizer import from_bytes
from w3lib.encoding import html_to_unicode

__all__ = ["MAX_CONTROL_SHARE", "SNIFF_BYTES", "binary_reason", "decode_html"]

SNIFF_BYTES = 65_536  # the head of the file judged: enough for a verdict, bounded work on 16 MB files
MAX_CONTROL_SHARE = 0.01
_TEXT_BOMS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16 (and UTF-32 LE, which starts with FF FE too)
_CONTROL_BYTES = re.compile(b"[\x01-\x08\x0e-\x1a\x1c-\x1f]")


def binary_reason(data: bytes) -> str | None:
    """Why ``data`` is binary content rather than text (one short phrase), or None for text."""
    if data.startswith(_TEXT_BOMS):
        return None
    head = data[:SNIFF_BYTES]
    nul = head.find(b"\x00")
    if nul < 0:
        nul = data.find(b"\x00", SNIFF_BYTES)
    if nul >= 0:
        return f"contenu binaire (octet NUL à la position {nul}), pas un fichier texte"
    controls = len(_CONTROL_BYTES.findall(head))
    if head and controls > MAX_CONTROL_SHARE * len(head):
        return f"contenu binaire ({controls} octets de contrôle dans les {len(head)} premiers), pas un fichier texte"
    return None


def _latin_letters(text: str) -> bool:
    """Every letter of ``text`` is a Latin one: the guess read a Latin-script text, whatever symbols
    (box drawing, punctuation) its code page put where windows-1252 has accented letters."""
    return all(unicodedata.name(ch, "").startswith("LATIN") for ch in text if ch.isalpha())


def _guess(data: bytes) -> str | None:
    """No BOM, header charset or declaration: UTF-8 when the bytes are; else charset-normalizer's
    guess, windows-1252 for a Latin-script one (module docstring). Latin-script is judged on the
    letters the guess decodes, not on its Unicode blocks: on a short page of « été à côté » its
    best guess was cp775, whose box-drawing symbols made a block list look non-Latin (« ╔tķ »)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        best = from_bytes(data[:200_000]).best()
        if best is None or _latin_letters(str(best)):
            try:
                data.decode("cp1252")
            except UnicodeDecodeError:
                return best.encoding if best is not None else None
            return "cp1252"
        return best.encoding
    return "utf-8"


def decode_html(data: bytes, content_type: str = "") -> str:
    """A page's text, decoded by its BOM, the HTTP header's charset (``content_type``, when fetched),
    its own declaration, else a guess (module docstring)."""
    _encoding, text = html_to_unicode(content_type or None, data, auto_detect_fun=_guess)
    return text
