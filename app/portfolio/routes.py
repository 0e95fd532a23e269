"""Portfolio export (a learner's own work; a cohort for its instructor) and its verification."""

from anyio import BrokenWorkerProcess
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import UploadFile

from app.accounts.models import MAX_ROW_ID
from app.core.whole_numbers import whole_number
from app.grading.progress import cohort_learners
from app.models.time import utcnow
from app.portfolio.bundle import cohort_basename, learner_basename
from app.portfolio.export import Kind, PortfolioExport, build_export
from app.portfolio.signing import UnreadableExport, VerifyResult
from app.portfolio.upload_check import check_upload
from app.web.deps import CohortDep, CurrentUser, OptionalUserDep, SessionDep, SigningKeyDep
from app.web.forms import close_form, read_form
from app.web.templating import templates

router = APIRouter(tags=["portfolio"], include_in_schema=False)

# A learner's export is ~17 kB per 200-step attempt (5 MB is ~300 attempts); a cohort's grows with
# every learner. Past this, parsing would only cost memory: the CLI checks exports of any size.
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
TOO_LARGE = "That file is larger than 20 MB: check it with `python -m app verify-export` instead."
CHECK_STOPPED = "The check stopped before it finished (the server is short of memory): try again."
EXPORT_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'"
)
MEDIA_TYPES = {
    "html": "text/html; charset=utf-8",
    "json": "application/json",
    "zip": "application/zip",
}


def download(export: PortfolioExport, kind: Kind) -> Response:
    body = {"html": export.html_bytes, "json": export.json_bytes, "zip": export.zip_bytes}[kind]()
    # The name is made by the server from [a-z0-9-] only: nothing to quote or escape.
    filename = f"{export.basename}.{kind}"
    return Response(
        body,
        media_type=MEDIA_TYPES[kind],
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "X-Content-Type-Options": "nosniff",
            # Stricter than the app's own (app/security/headers.py keeps it): the export's inline
            # styles and data: images only, no script, no fetch; as its <meta> policy says.
            "Content-Security-Policy": EXPORT_POLICY,
        },
    )


def own_export(
    session: SessionDep, user: CurrentUser, key: SigningKeyDep, kind: Kind
) -> PortfolioExport:
    return build_export(
        session,
        learners=[user],
        exporter=user,
        key=key,
        basename=learner_basename(user.username, user.saved_id, utcnow()),
        title=f"Drillbook portfolio of {user.display_name}",
        kind=kind,
    )


@router.get("/portfolio/export.html")
def export_html(session: SessionDep, user: CurrentUser, key: SigningKeyDep) -> Response:
    return download(own_export(session, user, key, "html"), "html")


@router.get("/portfolio/export.json")
def export_json(session: SessionDep, user: CurrentUser, key: SigningKeyDep) -> Response:
    return download(own_export(session, user, key, "json"), "json")


@router.get("/portfolio/export.zip")
def export_zip(session: SessionDep, user: CurrentUser, key: SigningKeyDep) -> Response:
    return download(own_export(session, user, key, "zip"), "zip")


@router.get("/cohorts/{cohort_id}/export.zip")
def export_cohort(
    cohort: CohortDep, session: SessionDep, user: CurrentUser, key: SigningKeyDep
) -> Response:
    assert cohort.id is not None
    export = build_export(
        session,
        learners=cohort_learners(session, cohort=cohort),
        exporter=user,
        key=key,
        basename=cohort_basename(cohort.id, utcnow()),
        title=f"Drillbook portfolios of the cohort {cohort.name}",
        kind="zip",
    )
    return download(export, "zip")


@router.get("/portfolio/verify", response_class=HTMLResponse)
def verify_page(request: Request, user: OptionalUserDep) -> HTMLResponse:
    return templates.TemplateResponse(request, "pages/verify.html", {"outcome": None})


@router.post("/portfolio/verify", response_class=HTMLResponse)
async def verify_upload(
    request: Request, user: OptionalUserDep, key: SigningKeyDep
) -> HTMLResponse:
    try:
        return await _check_upload(request, key.public_key())
    finally:
        # The CSRF check may already have parsed (and spooled) the upload: release it now.
        await close_form(request)


async def _check_upload(request: Request, server_key: Ed25519PublicKey) -> HTMLResponse:
    declared = whole_number(request.headers.get("content-length", ""), maximum=MAX_ROW_ID)
    if declared is not None and declared > MAX_UPLOAD_BYTES + 64 * 1024:
        return _verify_outcome(request, error=TOO_LARGE, status=413)
    upload = (await read_form(request)).get("file")
    if not isinstance(upload, UploadFile):
        return _verify_outcome(request, error="Choose the export's .json file.", status=422)
    data = await upload.read(MAX_UPLOAD_BYTES + 1)
    if len(data) > MAX_UPLOAD_BYTES:
        return _verify_outcome(request, error=TOO_LARGE, status=413)
    try:
        # Seconds of CPU for an export of many MB: in a process of its own (why: upload_check).
        result = await check_upload(data, server_key)
    except UnreadableExport as error:
        return _verify_outcome(request, error=f"Unreadable: {error}.", status=422)
    except BrokenWorkerProcess:  # killed or out of memory: nothing was stored, so say so
        return _verify_outcome(request, error=CHECK_STOPPED, status=503)
    return _verify_outcome(request, result=result)


def _verify_outcome(
    request: Request, *, result: VerifyResult | None = None, error: str = "", status: int = 200
) -> HTMLResponse:
    context = {"outcome": {"result": result, "error": error}}
    return templates.TemplateResponse(request, "pages/verify.html", context, status_code=status)
