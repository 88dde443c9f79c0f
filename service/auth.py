"""The bearer token: kept in a file (mode 0600), created at first start.

The token is printed once, at the start that created it, with a QR code of the pairing address
(``http://HOST:PORT/#token=...``: the fragment never reaches the server; the page keeps it in the
phone's local storage). The service never sends it to anyone; requests present it as
``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import io
import os
import secrets
import stat
from pathlib import Path

from .errors import ConfigError

#: characters of a token (token_urlsafe(24): 32 characters, 192 bits)
TOKEN_BYTES = 24


def load_or_create(path: Path) -> tuple[str, bool]:
    """The token in ``path``, or a new one written there (mode 0600, folder created 0700).

    Returns:
        (token, created).
    Raises:
        ConfigError: the file cannot be read or written, is empty, or is readable by others.
    """
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        text = None
    except OSError as e:
        raise ConfigError(f"cannot read the token file {path}: {e.strerror}") from None
    if text is not None:
        if len(text) < 16 or any(c.isspace() for c in text):
            raise ConfigError(f"token file {path} must hold one token of at least 16 characters; delete it to make a new one")
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise ConfigError(f"token file {path} is readable by others (mode {mode:04o}): chmod 600 {path}")
        return text, False
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(token + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as e:
        raise ConfigError(f"cannot create the token file {path}: {e.strerror}") from None
    return token, True


def check(presented: str | None, token: str) -> bool:
    """True when ``presented`` is the token (constant-time comparison)."""
    return presented is not None and secrets.compare_digest(presented.encode(), token.encode())


def pairing_text(url: str, token: str) -> str:
    """The first-start message: the token, the pairing address and its QR code (text blocks)."""
    import qrcode

    pair = f"{url}/#token={token}"
    qr = qrcode.QRCode(border=1)
    qr.add_data(pair)
    qr.make(fit=True)
    buf = io.StringIO()
    qr.print_ascii(out=buf, invert=True)
    return (f"New control token (shown once; kept in the token file): {token}\n"
            f"Pair a phone by scanning this code, or open {pair}\n{buf.getvalue()}")
