"""The one mapping of errors to HTTP answers, for every app of the package: a ``ServeError`` answers
its own ``status`` (QueryError 400, NotFound 404, a Range past the end 416), a malformed parameter
400, an unknown path 404, all as JSON ``{"error": "..."}``."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from lib.serve.errors import ServeError


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON error answer."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error ``app`` raises as JSON with a 4xx status (module doc)."""

    @app.exception_handler(ServeError)
    async def _serve_error(request: Request, exc: ServeError) -> JSONResponse:
        return error(exc.status, str(exc), exc.headers())

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for e in exc.errors():
            where = ".".join(str(x) for x in e.get("loc", ()) if x not in ("query", "path"))
            parts.append(f"{where}: {e.get('msg')}" + (f" (got {e['input']!r})" if "input" in e else ""))
        return error(400, "; ".join(parts) or "bad request")

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        msg = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404 and msg == "Not Found":
            msg = f"unknown path {request.url.path!r}"
        return error(exc.status_code, msg, getattr(exc, "headers", None))
