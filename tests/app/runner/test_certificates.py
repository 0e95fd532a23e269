"""`python -m app certs DIR`: a private CA and one certificate per cluster role, keys private."""

import ipaddress
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from app.core.config import ROOT
from app.runner.certificates import ROLES, all_files, subject_alt_names, tls_files


def make_certs(directory: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "certs", str(directory), *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_certs_writes_a_ca_and_a_certificate_per_role_with_private_keys(tmp_path: Path) -> None:
    folder = tmp_path / "certs"
    result = make_certs(folder, "--hosts", "scheduler.example, 10.0.0.5")
    assert result.returncode == 0, result.stderr

    assert sorted(path.name for path in folder.iterdir()) == sorted(
        path.name for path in all_files(folder)
    )
    ca = load(folder / "ca.pem")
    for role in ROLES:
        files = tls_files(folder, role)
        assert stat.S_IMODE(files.key.stat().st_mode) == 0o600, role
        certificate = load(files.cert)
        certificate.verify_directly_issued_by(ca)  # raises unless the CA signed it
        usages = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert ExtendedKeyUsageOID.CLIENT_AUTH in usages
        # The scheduler and workers also accept connections; a web server only opens them.
        assert (ExtendedKeyUsageOID.SERVER_AUTH in usages) == (role != "client")
    assert not (folder / "ca-key.pem").exists()  # nobody can sign another certificate

    names = load(folder / "worker.pem").extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    assert names.value.get_values_for_type(x509.DNSName) == ["scheduler.example"]
    assert names.value.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("10.0.0.5")]

    # The printout says where each file goes, including the web server's three variables.
    for expected in (
        "ca.pem: every host",
        "scheduler.pem, scheduler-key.pem: the scheduler host",
        "worker.pem, worker-key.pem: every worker host",
        "DRILLBOOK_TLS_CA_FILE=DIR/ca.pem",
        "DRILLBOOK_TLS_CERT_FILE=DIR/client.pem",
        "DRILLBOOK_TLS_KEY_FILE=DIR/client-key.pem",
    ):
        assert expected in result.stdout


def test_certs_refuses_to_overwrite_a_set_in_use(tmp_path: Path) -> None:
    assert make_certs(tmp_path).returncode == 0
    ca_before = (tmp_path / "ca.pem").read_bytes()

    again = make_certs(tmp_path)

    assert again.returncode == 1
    assert "already exist" in again.stderr
    assert (tmp_path / "ca.pem").read_bytes() == ca_before


@pytest.mark.parametrize(
    ("host", "kind"),
    [("127.0.0.1", x509.IPAddress), ("::1", x509.IPAddress), ("localhost", x509.DNSName)],
)
def test_hosts_become_ip_or_dns_names(host: str, kind: type[x509.GeneralName]) -> None:
    [name] = subject_alt_names([host])
    assert isinstance(name, kind)


def test_certs_needs_a_host(tmp_path: Path) -> None:
    refused = make_certs(tmp_path / "certs", "--hosts", ",")
    assert refused.returncode == 1
    assert "name at least one host" in refused.stderr
    assert not (tmp_path / "certs").exists()
