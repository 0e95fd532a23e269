"""Reading HTML form posts as plain string fields."""

from typing import Annotated

from fastapi import Depends, Request


async def form_fields(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


FormDep = Annotated[dict[str, str], Depends(form_fields)]


def is_htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"
