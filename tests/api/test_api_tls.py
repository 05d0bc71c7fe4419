"""HTTPS through the client's own pool and stream (`toolkit.api._asyncio_stream`): the real
platform is served over TLS, so the handshake, the certificate check and a request and its
answer are tried here against a server on loopback with a certificate made for the test."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import ssl
from typing import TYPE_CHECKING

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from toolkit.api._asyncio_stream import AsyncioBackend
from toolkit.api._connection_pool import FairConnectionPool, install

if TYPE_CHECKING:
    from pathlib import Path

BODY = b'{"data": {"id": "u1"}}'


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "platform.test")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A keep-alive HTTP/1.1 server of one JSON answer per request."""
    try:
        while (await reader.readuntil(b"\r\n\r\n")) != b"":
            head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
            writer.write(head + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _get_twice(cert: Path, key: Path, trusted: ssl.SSLContext) -> list[bytes]:
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    server = await asyncio.start_server(_answer, "127.0.0.1", 0, ssl=served)
    port = server.sockets[0].getsockname()[1]
    limits = httpx.Limits(max_connections=2)
    async with server, httpx.AsyncClient(verify=trusted, limits=limits) as client:
        assert install(client, limits, trusted)
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert isinstance(pool, FairConnectionPool)
        assert isinstance(pool._network_backend, AsyncioBackend)
        answers = []
        for _ in range(2):  # the second on the kept-alive TLS connection
            response = await client.get(f"https://127.0.0.1:{port}/users/me")
            answers.append(response.content)
        assert len(pool.connections) == 1
        return answers


def test_a_request_over_tls_goes_through_the_clients_stream(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    trusted = ssl.create_default_context(cafile=str(cert))

    assert asyncio.run(_get_twice(cert, key, trusted)) == [BODY, BODY]


def test_a_certificate_the_client_does_not_trust_is_refused(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    other_folder = tmp_path / "other"
    other_folder.mkdir()
    other, _ = _certificate(other_folder)  # a different self-signed certificate
    trusted = ssl.create_default_context(cafile=str(other))

    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(_get_twice(cert, key, trusted))
