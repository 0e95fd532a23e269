"""Typed settings, read from DRILLBOOK_* environment variables (or passed in by tests)."""

from pathlib import Path
from typing import Literal

from dask.utils import parse_bytes
from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ROOT = Path(__file__).resolve().parents[2]

# A warm worker (torch imported, one drill run done) holds about 345-365 MB of resident memory
# (measured on the 2-core development machine, torch 2.13 CPU). A per-run cap below that ends
# every run `resource_limit` at its first step; a nanny limit below it kills each worker while it
# warms up, and every run fails with CommClosedError. 512 MB (MiB, as the limits measure it)
# leaves room for a drill's own tensors; both settings are refused below it at start-up.
MIN_WORKER_MEMORY_MB = 512
MIB = 2**20


# A production session key's least length: 32 characters of a random token carry ~190 bits.
MIN_SECRET_KEY_CHARS = 32


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DRILLBOOK_", extra="ignore")

    environment: Literal["dev", "test", "prod"] = "dev"
    # SQLite file under the git-ignored var/ by default; PostgreSQL later through the same URL.
    database_url: str = f"sqlite:///{ROOT / 'var' / 'drillbook.sqlite3'}"
    # How the workers reach the same database, when their route differs from the web server's
    # (another host name, another user): they store each run's progress and record themselves.
    worker_database_url: str | None = None
    # None starts an embedded Dask LocalCluster; "tls://host:8786" uses an external scheduler.
    scheduler_address: str | None = None
    # Certificates for a tls:// external scheduler (mutual TLS): the CA that signed the cluster's
    # certificates, and this web server's client certificate and key. The embedded cluster makes
    # its own and needs none of these.
    tls_ca_file: Path | None = None
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    workers: int = Field(default=2, ge=1, le=64)
    # Hard limits for one run. The drill checks both cooperatively; the watchdog restarts a worker
    # that overshoots the time limit by more than the grace period.
    time_limit_s: float = Field(default=60.0, gt=0, le=3600)
    memory_limit_mb: float = Field(default=2048.0, gt=0)
    watchdog_grace_s: float = Field(default=5.0, ge=0)
    # An attempt no worker has started by then fails (e.g. an external cluster with no workers).
    queue_timeout_s: float = Field(default=600.0, gt=0)
    # A learner's runs queued or running at once (drills, cases and rounds together); one more is
    # refused with a 429, and each learner's runs are handed out in turn (app/runs/fair_share.py).
    runs_per_learner: int = Field(default=4, ge=1, le=1000)
    # The window a learner's share of the workers is counted over: their runs' worker seconds in
    # it against the workers' time over the learners active in it (app/runs/fair_share.py).
    share_window_s: float = Field(default=60.0, ge=1, le=3600)
    # When the pool has had no worker at all for this long, new attempts fail at once with that
    # reason instead of waiting out the queue timeout (and queued ones end too).
    no_worker_grace_s: float = Field(default=30.0, gt=0)
    # A running attempt whose worker has not written its (once a second) heartbeat for this long
    # lost its worker: ended `failed` by the housekeeping, whoever sent it.
    heartbeat_timeout_s: float = Field(default=20.0, gt=0)
    # Database connections per web process. Requests hold one while they run (the live streams
    # do not: they read in short sessions), so the pool is sized to the request thread pool (40).
    db_pool_size: int = Field(default=20, ge=1)
    db_max_overflow: int = Field(default=30, ge=0)
    db_pool_timeout_s: float = Field(default=30.0, gt=0)
    # Dask's nanny kills a worker process above this (a backstop for a single huge allocation).
    worker_memory_limit: str = "4GiB"
    # An embedded worker that has not registered this long after its start is replaced
    # (app/runner/pool.py): warm-up takes 3-5 s on an idle machine, tens under a class.
    worker_start_grace_s: float = Field(default=60.0, gt=0)
    # Each embedded worker starts its sandbox spawner (torch imported, ~510 MiB, 4-5 s of CPU)
    # as it starts, so its first code run is warm (drills/sandbox/spawner.py); off, the first
    # code run on each worker starts it. External workers read DRILLBOOK_SANDBOX_PREWARM from
    # their own environment.
    sandbox_prewarm: bool = True
    # Signs session cookies. Required in prod; dev and test keep a generated one in data_dir.
    secret_key: str | None = None
    # Failed logins (app/security/throttle.py). Per name: locks the name for the addresses that
    # failed on it. Per client address: locks that address for every name (a spray over names).
    login_max_failures: int = Field(default=5, ge=1)
    login_window_s: float = Field(default=300.0, gt=0)
    # Generous: a classroom behind one NAT address shares it, and learners mistype passwords.
    login_client_max_failures: int = Field(default=60, ge=1)
    login_client_window_s: float = Field(default=300.0, gt=0)
    # Accounts made from one address per window (a class behind one address registers at once).
    registration_client_max: int = Field(default=100, ge=1)
    registration_client_window_s: float = Field(default=3600.0, gt=0)
    # Reverse proxies whose X-Forwarded-For names the client (uvicorn's forwarded_allow_ips, e.g.
    # "127.0.0.1"). Unset: the header is ignored and the client is the peer of the connection.
    forwarded_allow_ips: str | None = None
    # Files the server keeps outside the database: the portfolio signing key lives here.
    data_dir: Path = ROOT / "var"

    @model_validator(mode="after")
    def _refuse_unsafe_outside_dev(self) -> "Settings":
        if self.environment == "prod" and not self.secret_key:
            raise ValueError("DRILLBOOK_SECRET_KEY must be set when DRILLBOOK_ENVIRONMENT=prod")
        if self.environment == "prod" and len(self.secret_key or "") < MIN_SECRET_KEY_CHARS:
            # It signs every session cookie: a short one can be guessed offline from one cookie.
            raise ValueError(
                f"DRILLBOOK_SECRET_KEY must be at least {MIN_SECRET_KEY_CHARS} characters when "
                "DRILLBOOK_ENVIRONMENT=prod (e.g. `python -c 'import secrets; "
                "print(secrets.token_urlsafe(48))'`)"
            )
        if (
            self.environment == "prod"
            and self.scheduler_address
            and not (self.scheduler_address.startswith("tls://"))
        ):
            # Dask's TCP protocol is unauthenticated: in production it must run over TLS.
            raise ValueError("DRILLBOOK_SCHEDULER_ADDRESS must use tls:// when environment=prod")
        return self

    @model_validator(mode="after")
    def _refuse_a_tls_scheduler_without_certificates(self) -> "Settings":
        # Without them Dask fails only at the first connection, with an SSL error that names
        # no setting (or "TLS expects a ssl_context argument").
        if not (self.scheduler_address or "").startswith("tls://"):
            return self
        files = {
            "DRILLBOOK_TLS_CA_FILE": self.tls_ca_file,
            "DRILLBOOK_TLS_CERT_FILE": self.tls_cert_file,
            "DRILLBOOK_TLS_KEY_FILE": self.tls_key_file,
        }
        unset = [name for name, path in files.items() if path is None]
        if unset:
            raise ValueError(
                f"DRILLBOOK_SCHEDULER_ADDRESS={self.scheduler_address} needs the cluster's "
                f"mutual-TLS files; {', '.join(unset)} unset (`python -m app certs DIR` makes "
                "them: DIR/ca.pem, DIR/client.pem, DIR/client-key.pem)"
            )
        missing = [f"{name}={path}" for name, path in files.items() if path and not path.is_file()]
        if missing:
            raise ValueError(f"no such file: {', '.join(missing)}")
        return self

    @model_validator(mode="after")
    def _refuse_memory_limits_below_a_warm_worker(self) -> "Settings":
        if self.memory_limit_mb < MIN_WORKER_MEMORY_MB:
            raise ValueError(
                f"DRILLBOOK_MEMORY_LIMIT_MB={self.memory_limit_mb:g} is below a warm worker's "
                f"footprint (about 365 MB): every run would hit it; use at least "
                f"{MIN_WORKER_MEMORY_MB}"
            )
        nanny = self.worker_memory_limit_bytes
        floor_mb = max(MIN_WORKER_MEMORY_MB, self.memory_limit_mb)
        if nanny is not None and nanny < floor_mb * MIB:
            below, effect = (
                ("DRILLBOOK_MEMORY_LIMIT_MB", "before a run's own limit can stop the run")
                if self.memory_limit_mb > MIN_WORKER_MEMORY_MB
                else ("a warm worker's footprint", "while they warm up")
            )
            raise ValueError(
                f"DRILLBOOK_WORKER_MEMORY_LIMIT={self.worker_memory_limit!r} is below {below} "
                f"({floor_mb:g} MiB): the nanny would kill workers {effect}"
            )
        return self

    @property
    def worker_memory_limit_bytes(self) -> int | None:
        """The nanny's limit in bytes; None for Dask's "auto" or 0 (no limit)."""
        text = self.worker_memory_limit.strip()
        if text == "auto":
            return None
        try:
            limit = int(parse_bytes(text))
        except ValueError:
            raise ValueError(
                f"DRILLBOOK_WORKER_MEMORY_LIMIT={text!r} is not a size like '4GiB' or '2GB'"
            ) from None
        return limit or None

    @property
    def secure_cookies(self) -> bool:
        # Local development runs on plain http://127.0.0.1; everywhere else cookies need HTTPS.
        return self.environment == "prod"

    @property
    def sqlite_path(self) -> Path | None:
        prefix = "sqlite:///"
        if self.database_url.startswith(prefix):
            return Path(self.database_url[len(prefix) :])
        return None
