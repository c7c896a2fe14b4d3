"""Exceptions raised by the client: one class per kind of answer, all under ReelbaseError."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class ReelbaseError(Exception):
    """Any failure the service answered (or that kept the request from being answered).

    ``status`` is the HTTP status (None when no answer came), ``code`` the machine code of the
    error body (``not_found``, ``duplicate_code``, ``idempotency_conflict``...), ``detail`` the
    human sentence, ``body`` the whole decoded error body and ``request_id`` the ``x-request-id``
    the service logged the request under.
    """

    def __init__(
        self,
        detail: str,
        status: Optional[int] = None,
        code: Optional[str] = None,
        body: Any = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.code = code
        self.body = body
        self.request_id = request_id

    def __str__(self) -> str:
        head = " ".join(str(p) for p in (self.status, self.code) if p is not None)
        return f"{head}: {self.detail}" if head else self.detail


class ValidationError(ReelbaseError):
    """422: the request was malformed. ``problems`` lists every problem (``loc``, ``msg``, ``type``)."""

    def __init__(self, detail: str, problems: List[Dict[str, Any]], **kw: Any) -> None:
        super().__init__(detail, **kw)
        self.problems = problems


class BadRequest(ReelbaseError):
    """400, 405, 408, 413, 415 and other client mistakes without a class of their own."""


class AuthenticationError(ReelbaseError):
    """401: missing, invalid, expired or revoked credentials (or a wrong email or password)."""


class PermissionDenied(ReelbaseError):
    """403: the caller's role may not do this."""


class NotFound(ReelbaseError):
    """404: no such record, type, route or reviewable."""


class Conflict(ReelbaseError):
    """409: a duplicate code, a stale write, a transition not allowed, an idempotency key reused with another body..."""


class RateLimited(ReelbaseError):
    """429 after the retries: ``retry_after`` holds the seconds the service asked to wait."""

    def __init__(self, detail: str, retry_after: Optional[float] = None, **kw: Any) -> None:
        super().__init__(detail, **kw)
        self.retry_after = retry_after


class ServerError(ReelbaseError):
    """5xx after the retries (503: a dependency of the service is down)."""


class ConnectionFailed(ReelbaseError, ConnectionError):
    """No answer after the retries: the connection failed, broke or timed out (``code`` ``timeout``)."""


class WaitTimeout(ReelbaseError, TimeoutError):
    """A wait (``wait_reviewable``) ran out of time before the state it waited for."""


_BY_STATUS = {
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
}


def error_from_response(status: int, body: Any, headers: Any, retry_after: Optional[float] = None) -> ReelbaseError:
    """The exception for an error answer: its class by status, its fields from the error body."""
    request_id = headers.get("x-request-id") if headers is not None else None
    if status == 422 and isinstance(body, dict) and isinstance(body.get("detail"), list):
        problems = [p for p in body["detail"] if isinstance(p, dict)]
        text = "; ".join(f"{'.'.join(str(x) for x in p.get('loc', []))}: {p.get('msg', '')}" for p in problems)
        return ValidationError(text or "invalid request", problems, status=status, code="validation_error", body=body, request_id=request_id)
    if isinstance(body, dict):
        detail = body.get("detail")
        code = body.get("code")
    else:
        detail, code = None, None
    if not isinstance(detail, str):
        detail = (body if isinstance(body, str) and body else None) or f"HTTP {status}"
    kw = {"status": status, "code": code if isinstance(code, str) else None, "body": body, "request_id": request_id}
    if status == 429:
        return RateLimited(detail, retry_after=retry_after, **kw)
    if status == 422:
        return ValidationError(detail, [], **kw)
    if status >= 500:
        return ServerError(detail, **kw)
    return _BY_STATUS.get(status, BadRequest)(detail, **kw)
