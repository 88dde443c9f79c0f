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


#: an address in TEST-NET-1 (RFC 5737): "connecting" a UDP socket to it sends nothing, but makes the
#: kernel pick the source address of the default route
_ROUTE_PROBE = ("192.0.2.1", 9)
_UNSPECIFIED = ("0.0.0.0", "::", "")


def lan_address() -> str | None:
    """The IPv4 address of the interface of the default route (what a phone on the table's network
    opens), or None without a default route."""
    import socket
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(_ROUTE_PROBE)
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if addr.startswith("127.") or addr == "0.0.0.0" else addr


def _loopback(host: str) -> bool:
    return host == "localhost" or host.startswith("127.") or host == "::1"


def pairing_url(host: str, port: int, public_url: str | None = None, *, tls: bool = False) -> str | None:
    """The address a phone opens to pair: ``public_url`` when given, else the bound address, the
    LAN address of the default route when bound to every interface (0.0.0.0 or ::); never
    ``localhost`` or ``0.0.0.0`` (``https`` with ``tls``). None when a phone cannot reach the service (bound to loopback,
    or to every interface without a default route)."""
    if public_url:
        return public_url.rstrip("/")
    if _loopback(host):
        return None
    scheme = "https" if tls else "http"
    if host in _UNSPECIFIED:
        addr = lan_address()
        return f"{scheme}://{addr}:{port}" if addr else None
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def pairing_text(url: str | None, token: str, *, new: bool = True, local_url: str | None = None) -> str:
    """The token, the pairing address and its QR code (text blocks); printed at the first start of
    ``mjtable serve`` (``new``) and by ``mjtable token show``. Without a ``url`` a phone cannot reach
    the service: the message says how to make it reachable, and gives no QR code."""
    head = (f"New control token (shown once; kept in the token file): {token}\n" if new
            else f"Control token: {token}\n")
    if url is None:
        local = f" On this machine open {local_url}/#token={token}" if local_url else ""
        return (head + "Pair a phone: the service is not reachable from the table's network (bound to this machine "
                "only, or no default route): serve with --host 0.0.0.0, or give --public-url URL." + local + "\n")
    import qrcode

    pair = f"{url}/#token={token}"
    qr = qrcode.QRCode(border=1)
    qr.add_data(pair)
    qr.make(fit=True)
    buf = io.StringIO()
    qr.print_ascii(out=buf, invert=True)
    return head + f"Pair a phone by scanning this code, or open {pair}\n{buf.getvalue()}"


def read(path: Path) -> str:
    """The token in an existing token file (checked as ``load_or_create`` checks it).

    Raises:
        ConfigError: no such file (start ``mjtable serve`` once to create it), unreadable, or wrong.
    """
    if not Path(path).exists():
        raise ConfigError(f"no token file at {path}: start mjtable serve once to create it (or give --token-file)")
    return load_or_create(Path(path))[0]
