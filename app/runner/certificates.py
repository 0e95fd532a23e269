"""Certificates for an external cluster's mutual TLS (`python -m app certs DIR`): a private CA,
and one certificate each for the scheduler, the workers and the web servers.

Dask admits every peer whose certificate the cluster's CA signed, whatever its role, and checks
no host names (`distributed.security` turns `check_hostname` off: clusters are reached by IP
address). So the CA is the whole trust boundary, and its private key is never written down:
nobody can sign another certificate later. To add or replace one, make a new set and hand it
out again. The three roles still get their own keys so that each host holds only its own.
"""

import ipaddress
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

Role = Literal["scheduler", "worker", "client"]
ROLES: tuple[Role, ...] = ("scheduler", "worker", "client")
CA_FILE = "ca.pem"
DEFAULT_HOSTS = ("127.0.0.1", "localhost")
# Long enough to outlast a teaching term without renewal machinery; the CA expires with them.
VALID_FOR = timedelta(days=3 * 365)
# Schedulers and workers both accept connections and open them (the scheduler calls workers,
# workers call the scheduler and each other); web servers only open them.
USAGES: dict[Role, list[x509.ObjectIdentifier]] = {
    "scheduler": [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH],
    "worker": [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH],
    "client": [ExtendedKeyUsageOID.CLIENT_AUTH],
}


@dataclass(frozen=True)
class TlsFiles:
    """The three PEM files one process of the cluster needs."""

    ca: Path
    cert: Path
    key: Path


def tls_files(directory: Path, role: Role) -> TlsFiles:
    return TlsFiles(
        ca=directory / CA_FILE, cert=directory / f"{role}.pem", key=directory / f"{role}-key.pem"
    )


def all_files(directory: Path) -> list[Path]:
    files = [directory / CA_FILE]
    for role in ROLES:
        role_files = tls_files(directory, role)
        files += [role_files.cert, role_files.key]
    return files


def subject_alt_names(hosts: Iterable[str]) -> list[x509.GeneralName]:
    """Each host as an IP address entry when it is one, else as a DNS name."""
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def make_cluster_certificates(directory: Path, hosts: Sequence[str] = DEFAULT_HOSTS) -> list[Path]:
    """Write the CA certificate and a certificate and key per role into `directory`; refuse to
    overwrite a set already there (a running cluster's credentials). Returns the files written."""
    if not hosts:
        raise ValueError("name at least one host (--hosts) for the certificates' subjectAltNames")
    existing = [path for path in all_files(directory) if path.exists()]
    if existing:
        raise FileExistsError(
            f"{', '.join(str(path) for path in existing)} already exist; "
            "remove them or choose another directory"
        )
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("Drillbook cluster CA")
    ca_cert = (
        _validity(x509.CertificateBuilder(), now)
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(signs_certificates=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    written = [directory / CA_FILE]
    written[0].write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    for role in ROLES:
        files = tls_files(directory, role)
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            _validity(x509.CertificateBuilder(), now)
            .subject_name(_name(f"drillbook-{role}"))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(signs_certificates=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage(USAGES[role]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
            )
        )
        if role != "client":
            builder = builder.add_extension(
                x509.SubjectAlternativeName(subject_alt_names(hosts)), critical=False
            )
        certificate = builder.sign(ca_key, hashes.SHA256())
        files.cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        _write_private(files.key, key)
        written += [files.cert, files.key]
    return written


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Drillbook"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _validity(builder: x509.CertificateBuilder, now: datetime) -> x509.CertificateBuilder:
    # Valid from a few minutes ago: a host whose clock runs slightly behind still accepts it.
    return (
        builder.serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + VALID_FOR)
    )


def _key_usage(*, signs_certificates: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not signs_certificates,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs_certificates,
        crl_sign=signs_certificates,
        encipher_only=False,
        decipher_only=False,
    )


def _write_private(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),  # Dask's processes start unattended: no passphrase
    )
    # 0600 from the first byte (not chmod-ed after a window where others could read it); O_EXCL
    # so that a key another process wrote meanwhile is never overwritten.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)
