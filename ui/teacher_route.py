"""``POST /_lab/teacher-session``: where the browser exchanges a sign-in claim for the teacher's
HttpOnly cookie (:mod:`rag_metrics.server.teacher_sessions`), or has it deleted on sign-out.

A script can set only cookies a script can read; this endpoint lets the server set the teacher's
cookie itself, ``HttpOnly; SameSite=Strict; Path=/`` (``Secure`` over HTTPS), so the session token is
never in the page.  :func:`install` (called by :mod:`ui.launch`) adds the route to Streamlit's web app.

Body (form-encoded): ``claim=<code>`` sets the cookie for the claim's session (204; 403 for an unknown,
used or expired claim); ``end=1`` deletes the cookie (204).

Only a same-origin request is taken (:func:`same_origin`: ``Sec-Fetch-Site: same-origin``, else an
``Origin`` whose host and port are the request's ``Host``); anything else is refused with 403 before
the body is read, so a page on another site can neither sign the teacher out nor try claims.  A wrong
claim costs a read of the session store, never a write (:meth:`TeacherSessions.redeem`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from rag_metrics.server.seats import TEACHER_COOKIE
from rag_metrics.server.teacher_sessions import SESSION_TTL, TeacherSessions

__all__ = ["PATH", "handle", "install", "same_origin", "set_cookie_header"]

PATH = "/_lab/teacher-session"


def same_origin(headers: Mapping[str, str]) -> bool:
    """True for a request the lab's own page sent: ``Sec-Fetch-Site: same-origin`` (every current
    browser sends it), else (no ``Sec-Fetch-Site``) an ``Origin`` naming the ``Host`` it was sent to.
    A request with neither is refused: a browser always sends one of them on a POST.

    >>> same_origin({"sec-fetch-site": "same-origin"}), same_origin({"sec-fetch-site": "cross-site"})
    (True, False)
    >>> same_origin({"origin": "http://10.0.0.5:8501", "host": "10.0.0.5:8501"}), same_origin({"host": "h"})
    (True, False)
    >>> same_origin({"origin": "http://evil.example", "host": "10.0.0.5:8501"})
    False
    """
    h = {str(k).lower(): str(v) for k, v in headers.items()}
    site = h.get("sec-fetch-site")
    if site is not None:
        return site.strip().lower() == "same-origin"
    origin, host = h.get("origin", "").strip(), h.get("host", "").strip().lower()
    if not origin or not host:
        return False
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host


def set_cookie_header(value: str, max_age: int, secure: bool) -> str:
    """The ``Set-Cookie`` value for the teacher's cookie (``max_age`` 0 deletes it)."""
    return (f"{TEACHER_COOKIE}={value}; Path=/; Max-Age={int(max_age)}; HttpOnly; SameSite=Strict"
            + ("; Secure" if secure else ""))


async def handle(request: Any) -> Any:
    from starlette.responses import Response

    if not same_origin(request.headers):  # not logged: a flood of refusals must cost nothing
        return Response(status_code=403, headers={"Cache-Control": "no-store"})
    form = await request.form()
    secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    if form.get("end"):
        return Response(status_code=204, headers={"Set-Cookie": set_cookie_header("", 0, secure),
                                                  "Cache-Control": "no-store"})
    token = TeacherSessions().redeem(str(form.get("claim") or ""))
    if token is None:
        return Response(status_code=403, headers={"Cache-Control": "no-store"})
    return Response(status_code=204, headers={"Set-Cookie": set_cookie_header(token, SESSION_TTL, secure),
                                              "Cache-Control": "no-store"})


def install() -> None:
    """Add the route to the web app Streamlit builds (first, before its catch-all static files)."""
    from starlette.routing import Route
    from streamlit.web.server.starlette import starlette_server

    original = starlette_server.create_starlette_app
    if getattr(original, "_lab_teacher_route", False):
        return

    def create(runtime: Any) -> Any:
        app = original(runtime)
        app.router.routes.insert(0, Route(PATH, handle, methods=["POST"]))
        return app

    create._lab_teacher_route = True  # type: ignore[attr-defined]
    starlette_server.create_starlette_app = create
