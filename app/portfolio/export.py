"""One export of one or more learners' work: the signed JSON document and the HTML page built
from the same records, with the server-made file name they share."""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlmodel import Session

from app.accounts.models import User
from app.models.time import utcnow
from app.portfolio.bundle import zip_bundle
from app.portfolio.html import render_portfolio
from app.portfolio.records import load_records
from app.portfolio.signing import FORMAT, sign
from app.portfolio.statements import statements_for
from app.portfolio.xapi import timestamp

Kind = Literal["html", "json", "zip"]


@dataclass(frozen=True)
class PortfolioExport:
    basename: str
    document: dict[str, Any]
    html: str  # empty when only the JSON was asked for
    made_at: datetime

    def json_bytes(self) -> bytes:
        return document_bytes(self.document)

    def html_bytes(self) -> bytes:
        return self.html.encode("utf-8")

    def zip_bytes(self) -> bytes:
        return zip_bundle(
            self.basename, html=self.html_bytes(), document=self.json_bytes(), when=self.made_at
        )


def document_bytes(document: dict[str, Any]) -> bytes:
    """The JSON file: one record per line (compact), so a reader or a diff sees record N on
    line N + 3, and metric series do not spread over thousands of lines."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    head = {key: value for key, value in document.items() if key not in ("statements", "signature")}
    lines = ["{"]
    lines += [f" {compact(key)}: {compact(value)}," for key, value in head.items()]
    lines.append(' "statements": [')
    lines.append(",\n".join("  " + compact(statement) for statement in document["statements"]))
    lines.append(" ],")
    lines.append(f' "signature": {compact(document["signature"])}')
    lines.append("}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def build_export(
    session: Session,
    *,
    learners: list[User],
    exporter: User,
    key: Ed25519PrivateKey,
    basename: str,
    title: str,
    kind: Kind,
) -> PortfolioExport:
    made_at = utcnow()
    records = load_records(session, learners)
    unsigned = {
        "format": FORMAT,
        "exported_at": timestamp(made_at),
        "exporter": {"name": "Drillbook", "by": exporter.username},
        "statements": statements_for(records),
    }
    document = sign(unsigned, key)
    html = ""
    if kind != "json":  # the page costs as much as the statements: only render it when wanted
        html = render_portfolio(session, records=records, document=document, title=title)
    return PortfolioExport(basename=basename, document=document, html=html, made_at=made_at)
