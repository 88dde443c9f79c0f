"""Pairing a phone: the QR code carries an address a phone can open (the LAN address of the default
route, or --public-url), never localhost or 0.0.0.0; ``mjtable token show`` prints it again."""

from __future__ import annotations

import os

import pytest

from app import cli
from service import auth
from service.config import check_public_url
from service.errors import ConfigError


def test_the_pairing_address_is_one_a_phone_can_open(monkeypatch) -> None:
    monkeypatch.setattr(auth, "lan_address", lambda: "192.168.1.23")
    assert auth.pairing_url("0.0.0.0", 8080) == "http://192.168.1.23:8080"
    assert auth.pairing_url("::", 8080) == "http://192.168.1.23:8080"
    assert auth.pairing_url("10.0.0.5", 80) == "http://10.0.0.5:80"
    assert auth.pairing_url("127.0.0.1", 8080) is None and auth.pairing_url("localhost", 8080) is None
    assert auth.pairing_url("0.0.0.0", 8080, "https://table7.hall.example/") == "https://table7.hall.example"
    monkeypatch.setattr(auth, "lan_address", lambda: None)  # no default route
    assert auth.pairing_url("0.0.0.0", 8080) is None


def test_the_lan_address_is_not_loopback() -> None:
    addr = auth.lan_address()
    assert addr is None or (not addr.startswith("127.") and addr.count(".") == 3)


def test_the_qr_code_is_given_only_for_a_reachable_address() -> None:
    text = auth.pairing_text("http://192.168.1.23:8080", "tok" * 8)
    assert "open http://192.168.1.23:8080/#token=" + "tok" * 8 in text and any(c in text for c in "█▀▄")
    text = auth.pairing_text(None, "tok" * 8, local_url="http://localhost:8080")
    assert "--host 0.0.0.0" in text and not any(c in text for c in "█▀▄")


@pytest.mark.parametrize("bad", ["ftp://x", "http://localhost:8080", "http://0.0.0.0:8080", "http://127.0.0.1",
                                 "http://table/#token=x", "table7"])
def test_a_public_url_a_phone_cannot_open_is_refused(bad) -> None:
    with pytest.raises(ConfigError, match="public-url"):
        check_public_url(bad)


def test_token_show_prints_the_token_and_the_qr_code_again(tmp_path, capsys) -> None:
    path = tmp_path / "token"
    assert cli.main(["token", "show", "--token-file", str(path)]) == 1
    assert "start mjtable serve once" in capsys.readouterr().err
    token, created = auth.load_or_create(path)
    assert created and oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert cli.main(["token", "show", "--token-file", str(path), "--public-url", "http://table7.hall.example:8080"]) == 0
    out = capsys.readouterr().out
    assert f"Control token: {token}" in out and f"open http://table7.hall.example:8080/#token={token}" in out
    assert "localhost" not in out and "0.0.0.0" not in out
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[service]\nhost = "127.0.0.1"\ntoken_file = "{path}"\n')
    assert cli.main(["token", "show", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "--host 0.0.0.0" in out and "#token=" in out
