"""Reading a file people edit (configuration, waivers, checks) as UTF-8 text.

One message for a file that is not UTF-8, wherever it is read: the callers add what to do
about it in their own terms::

    try:
        text = read_utf8(path)
    except NotUtf8 as exc:
        raise ConfigError(f"{exc}, or pass --config the right file") from None
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["NotUtf8", "read_utf8"]


class NotUtf8(ValueError):
    """The file is not UTF-8 text; the message names it, the byte and what to do."""


def read_utf8(path: Path) -> str:
    """The file's text. A UTF-8 byte-order mark (Windows editors write one) is dropped; a
    file in another encoding raises :class:`NotUtf8` (UTF-16 is named as such), and one
    that cannot be read, :class:`OSError`."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        utf16 = " (it is UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise NotUtf8(
            f"{path} is not UTF-8 text{utf16}, byte {exc.start} cannot be read: save it as UTF-8"
        ) from None
