"""The Reelbase client: records, queries, batches, summaries, reviewables and events."""

from __future__ import annotations

import logging
import mimetypes
import os
import random
import threading
import time
import uuid
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence
from urllib.parse import quote

from .errors import ConnectionFailed, NotFound, RateLimited, ReelbaseError, ServerError, WaitTimeout
from .transport import Send, Transport

log = logging.getLogger("reelbase")

Record = Dict[str, Any]
Filters = Any  # a list of conditions, or {"filter_operator": "all"|"any", "filters": [...]}

#: The most records one query page may hold.
MAX_PAGE = 1000
_UNSET: Any = object()


class _Secret:
    """A credential that never shows itself in a repr, a str, a log line or a traceback's locals."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<redacted>"

    __str__ = __repr__


class _Credentials:
    """The bearer token of each request: an API key, or a login token fetched (and renewed) with a password."""

    def __init__(self, client: "Reelbase", api_key: Optional[str], email: Optional[str], password: Optional[str]) -> None:
        self._client = client
        self._api_key = _Secret(api_key) if api_key else None
        self._email = email
        self._password = _Secret(password) if password is not None else None
        self._token: Optional[_Secret] = None
        self._lock = threading.Lock()

    @property
    def kind(self) -> str:
        return "api_key" if self._api_key else "login"

    @property
    def email(self) -> Optional[str]:
        return self._email

    def __call__(self) -> Optional[str]:
        if self._api_key:
            return self._api_key.reveal()
        token = self._token
        if token is None:
            with self._lock:
                if self._token is None:
                    self._token = _Secret(self._client._login(self._email or "", self._password.reveal() if self._password else ""))
                token = self._token
        return token.reveal()

    def refresh(self, used: Optional[str]) -> bool:
        """After a 401: logs in again unless another thread already did. False with an API key."""
        if self._api_key:
            return False
        with self._lock:
            if self._token is None or self._token.reveal() == used:
                self._token = _Secret(self._client._login(self._email or "", self._password.reveal() if self._password else ""))
        return True

    def __repr__(self) -> str:
        return "<credentials redacted>"


def _seg(value: Any) -> str:
    """One path segment, percent-encoded."""
    return quote(str(value), safe="")


def _key(given: Optional[str]) -> str:
    return given if given else str(uuid.uuid4())


class Reelbase:
    """A client of one Reelbase service. Share one instance between threads.

    ``Reelbase(url, api_key="svc_...")`` or ``Reelbase(url, email=..., password=...)``.
    Timeouts are on by default: ``connect_timeout`` (10 s) to open a connection and
    ``read_timeout`` (30 s) for each wait on the service. ``retries`` (5) is how many times a
    request that failed on the way (connection, 429, 502, 503, 504) is sent again when that is
    safe; ``backoff`` the first pause in seconds (doubled each time, with jitter, at most
    ``max_backoff``); a 429's ``Retry-After`` is honoured up to ``max_retry_after`` seconds.
    """

    def __init__(
        self,
        url: str,
        api_key: Optional[str] = None,
        *,
        email: Optional[str] = None,
        password: Optional[str] = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 10.0,
        max_retry_after: float = 120.0,
        pool_size: int = 16,
    ) -> None:
        if api_key and (email or password):
            raise ValueError("give either api_key or email and password, not both")
        if not api_key and not (email and password is not None):
            raise ValueError("give api_key, or email and password")
        from . import __version__

        self._transport = Transport(
            url,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retries=retries,
            backoff=backoff,
            max_backoff=max_backoff,
            max_retry_after=max_retry_after,
            pool_size=pool_size,
            user_agent=f"reelbase-python/{__version__}",
        )
        self._auth = _Credentials(self, api_key, email, password)

    @property
    def url(self) -> str:
        return self._transport.base_url

    def __repr__(self) -> str:
        who = "api_key=<redacted>" if self._auth.kind == "api_key" else f"email={self._auth.email!r}, password=<redacted>"
        return f"Reelbase({self.url!r}, {who})"

    def close(self) -> None:
        """Closes the pooled connections."""
        self._transport.close()

    def __enter__(self) -> "Reelbase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- plumbing --------------------------------------------------------------------------

    def _login(self, email: str, password: str) -> str:
        res = self._transport.request("POST", "/auth/login", json_body={"email": email, "password": password}, retry_safe=True)
        return str(res.data["access_token"])

    def _get(self, path: str, query: Optional[Mapping[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        return self._transport.request("GET", path, query=query, auth=self._auth, retry_safe=True, timeout=timeout).data

    def _read(self, path: str, body: Any) -> Any:
        """A POST that only reads (a query, a summary): safe to send again as it is."""
        return self._transport.request("POST", path, json_body=body, auth=self._auth, retry_safe=True).data

    def _write(self, path: str, body: Any, idempotency_key: Optional[str] = None) -> Any:
        """A POST that writes: one Idempotency-Key for all its attempts, so a retry writes nothing twice."""
        headers = {"Idempotency-Key": _key(idempotency_key)}
        return self._transport.request("POST", path, json_body=body, headers=headers, auth=self._auth, retry_safe=True).data

    def request(self, method: str, path: str, body: Any = None, query: Optional[Mapping[str, Any]] = None) -> Any:
        """Any other route of the service (see its OpenAPI document at ``GET /openapi.json``).

        A POST carries an Idempotency-Key and is retried like the other writes; GET is retried
        freely; other methods only when they never reached the service.
        """
        method = method.upper()
        if method == "POST":
            return self._transport.request(
                "POST", path, query=query, json_body=body, headers={"Idempotency-Key": _key(None)}, auth=self._auth, retry_safe=True
            ).data
        safe = method in ("GET", "HEAD", "PUT")
        return self._transport.request(method, path, query=query, json_body=body, auth=self._auth, retry_safe=safe).data

    # -- records ---------------------------------------------------------------------------

    def me(self) -> Record:
        """The caller's User record, with ``role`` and ``auth``."""
        return self._get("/me")

    def get(self, entity_type: str, record_id: str) -> Record:
        """One record (``NotFound`` when it does not exist or is retired)."""
        return self._get(f"/entities/{_seg(entity_type)}/{_seg(record_id)}")

    def iter_find(
        self,
        entity_type: str,
        filters: Optional[Filters] = None,
        fields: Optional[Sequence[str]] = None,
        order: Optional[Sequence[Mapping[str, str]]] = None,
        limit: Optional[int] = None,
        *,
        page_size: int = 500,
        include_retired: bool = False,
    ) -> Iterator[Record]:
        """Yields the matching records page by page, fetching the next page only when needed.

        Pages are keyset pages: records inserted while paging never make one repeat or go missing.
        ``limit`` caps the total (None: every match).
        """
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0 or None")
        page_size = max(1, min(MAX_PAGE, page_size))
        body: Dict[str, Any] = {"filters": filters if filters is not None else []}
        if fields is not None:
            body["fields"] = list(fields)
        if order:
            body["order"] = [dict(o) for o in order]
        if include_retired:
            body["include_retired"] = True
        remaining = limit
        path = f"/entities/{_seg(entity_type)}/query"
        while remaining is None or remaining > 0:
            body["limit"] = page_size if remaining is None else min(page_size, remaining)
            page = self._read(path, body)
            items = page.get("items") or []
            for item in items:
                yield item
            if remaining is not None:
                remaining -= len(items)
            cursor = page.get("next_cursor")
            if not cursor or not items:
                return
            body["cursor"] = cursor

    def find(
        self,
        entity_type: str,
        filters: Optional[Filters] = None,
        fields: Optional[Sequence[str]] = None,
        order: Optional[Sequence[Mapping[str, str]]] = None,
        limit: Optional[int] = None,
        *,
        page_size: int = 500,
        include_retired: bool = False,
    ) -> List[Record]:
        """Every matching record (or the first ``limit``) as a list; see ``iter_find``."""
        return list(self.iter_find(entity_type, filters, fields, order, limit, page_size=page_size, include_retired=include_retired))

    def find_one(
        self,
        entity_type: str,
        filters: Optional[Filters] = None,
        fields: Optional[Sequence[str]] = None,
        order: Optional[Sequence[Mapping[str, str]]] = None,
    ) -> Optional[Record]:
        """The first matching record, or None."""
        found = self.find(entity_type, filters, fields, order, limit=1)
        return found[0] if found else None

    def create(
        self,
        entity_type: str,
        data: Optional[Mapping[str, Any]] = None,
        project_id: Optional[str] = None,
        *,
        status: Optional[str] = None,
        active: Optional[bool] = None,
        thumbnail_id: Optional[str] = None,
        task_template: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Record:
        """Creates a record and returns it.

        Sent with an Idempotency-Key (a new one unless given), so the retries after a lost answer
        return the first answer instead of creating a duplicate. Give your own key to make a
        create safe to repeat across runs of your program.
        """
        body: Dict[str, Any] = {"data": dict(data or {})}
        for name, value in (("project_id", project_id), ("status", status), ("active", active), ("thumbnail_id", thumbnail_id), ("task_template", task_template)):
            if value is not None:
                body[name] = value
        return self._write(f"/entities/{_seg(entity_type)}", body, idempotency_key)

    def update(
        self,
        entity_type: str,
        record_id: str,
        data: Optional[Mapping[str, Any]] = None,
        *,
        status: Any = _UNSET,
        project_id: Any = _UNSET,
        active: Any = _UNSET,
        thumbnail_id: Any = _UNSET,
        if_match: Optional[str] = None,
    ) -> Record:
        """Updates a record: ``data`` is merged key by key (a key set to None is removed).

        ``status``, ``project_id``, ``thumbnail_id`` (None clears them) and ``active`` change only
        when given. ``if_match`` (a record's ``updated_at``) applies the write only if the record
        is unchanged since, else ``Conflict`` (``stale_write``).
        """
        body: Dict[str, Any] = {}
        if data is not None:
            body["data"] = dict(data)
        for name, value in (("status", status), ("project_id", project_id), ("active", active), ("thumbnail_id", thumbnail_id)):
            if value is not _UNSET:
                body[name] = value
        headers = {"If-Match": if_match if if_match.startswith('"') or if_match == "*" else f'"{if_match}"'} if if_match else None
        return self._transport.request(
            "PATCH", f"/entities/{_seg(entity_type)}/{_seg(record_id)}", json_body=body, headers=headers, auth=self._auth, retry_safe=False
        ).data

    def delete(self, entity_type: str, record_id: str) -> Dict[str, Any]:
        """Retires a record (``revive`` restores it); returns ``{"id", "entity_type", "retired": True}``."""
        return self._transport.request("DELETE", f"/entities/{_seg(entity_type)}/{_seg(record_id)}", auth=self._auth, retry_safe=False).data

    def revive(self, entity_type: str, record_id: str, *, idempotency_key: Optional[str] = None) -> Record:
        """Restores a retired record and returns it."""
        return self._write(f"/entities/{_seg(entity_type)}/{_seg(record_id)}/revive", None, idempotency_key)

    def batch(self, requests: Sequence[Mapping[str, Any]], *, idempotency_key: Optional[str] = None) -> List[Any]:
        """Runs up to 500 creates, updates and deletes in one transaction: all of them or none.

        Each request is ``{"request_type": "create"|"update"|"delete", "entity_type", "entity_id"?,
        "project_id"?, "status"?, "data"?}``. Returns one result per request, in order (the record,
        or True for a delete). When one fails nothing is written and the error names its index
        (``ValidationError.problems`` with ``loc`` ``["body", "requests", i, ...]``, or
        ``error.body["index"]``).
        """
        res = self._write("/batch", {"requests": [dict(r) for r in requests]}, idempotency_key)
        return list(res["results"])

    def summarize(
        self,
        entity_type: str,
        filters: Optional[Filters],
        summary_fields: Sequence[Mapping[str, Any]],
        grouping: Optional[Sequence[Mapping[str, Any]]] = None,
    ) -> Dict[str, Any]:
        """Summaries (``record_count``, ``sum``, ``average``, ``status_list``...) of the matching records,
        optionally in up to three levels of groups: ``{"summaries": {...}, "groups": [...]}``."""
        body: Dict[str, Any] = {"filters": filters if filters is not None else [], "summary_fields": [dict(s) for s in summary_fields]}
        if grouping:
            body["grouping"] = [dict(g) for g in grouping]
        return self._read(f"/entities/{_seg(entity_type)}/summarize", body)

    def schema(self) -> Dict[str, Any]:
        """The whole schema: entity types, fields, statuses, steps, priorities, workflows."""
        return self._get("/schema")

    def notes_for(self, entity_type: str, record_id: str) -> List[Record]:
        """The live Notes whose ``links`` name the record, oldest first."""
        return list(self._get(f"/entities/{_seg(entity_type)}/{_seg(record_id)}/notes")["items"])

    # -- reviewables -----------------------------------------------------------------------

    def upload_reviewable(
        self,
        version_id: str,
        path: "os.PathLike[str] | str",
        progress: Optional[Callable[[int, int], None]] = None,
        *,
        chunk_size: int = 1024 * 1024,
        content_type: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Uploads a movie or image as the Version's reviewable; returns ``{"representation", "status"}``.

        The file is streamed from disk ``chunk_size`` bytes at a time (memory stays flat whatever
        its size); ``progress(sent, total)`` is called after each chunk with the file's bytes sent
        so far and its size (a retry after a broken connection starts again from 0). The thumbnail
        and proxy are made afterwards: see ``wait_reviewable``.
        """
        path = os.fspath(path)
        size = os.path.getsize(path)
        name = os.path.basename(path)
        ctype = content_type or mimetypes.guess_type(name)[0] or "application/octet-stream"
        boundary = "reelbase-" + uuid.uuid4().hex
        # Only the extension of the name matters to the service; keep the header plain ASCII.
        safe_name = "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\' else "_" for ch in name) or "upload"
        head = (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="file"; filename="{safe_name}"\r\n'
            f"Content-Type: {ctype}\r\n\r\n"
        ).encode("ascii")
        tail = f"\r\n--{boundary}--\r\n".encode("ascii")
        chunk_size = max(4096, chunk_size)

        def write(send: Send) -> None:
            send(head)
            buf = bytearray(chunk_size)
            view = memoryview(buf)
            sent = 0
            if progress:
                progress(0, size)
            with open(path, "rb") as f:
                while sent < size:
                    n = f.readinto(buf)
                    if not n:
                        raise ReelbaseError(f"{path} became shorter while it was uploaded")
                    n = min(n, size - sent)
                    send(view[:n])
                    sent += n
                    if progress:
                        progress(sent, size)
            send(tail)

        return self._transport.request(
            "POST",
            f"/versions/{_seg(version_id)}/reviewable",
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "Idempotency-Key": _key(idempotency_key)},
            body=(len(head) + size + len(tail), write),
            auth=self._auth,
            retry_safe=True,
            timeout=timeout,
        ).data

    def reviewable(self, version_id: str) -> Dict[str, Any]:
        """The Version's latest reviewable: ``status``, ``review_kind``, media keys, ``transcode_error``..."""
        return self._get(f"/versions/{_seg(version_id)}/reviewable")

    def wait_reviewable(self, version_id: str, timeout: float = 600, interval: float = 1.0) -> Dict[str, Any]:
        """Waits until the Version's latest reviewable is ``done`` or ``failed`` and returns its status.

        Raises ``WaitTimeout`` after ``timeout`` seconds, ``NotFound`` when the Version does not exist.
        """
        deadline = time.monotonic() + timeout
        checked_version = False
        while True:
            try:
                status = self.reviewable(version_id)
                if status.get("status") in ("done", "failed"):
                    return status
            except NotFound:
                if not checked_version:
                    self.get("Version", version_id)  # NotFound for a Version that does not exist
                    checked_version = True
            left = deadline - time.monotonic()
            if left <= 0:
                raise WaitTimeout(f"the reviewable of Version {version_id} was not done after {timeout} s", code="timeout")
            time.sleep(min(interval, left))

    # -- events ----------------------------------------------------------------------------

    def last_event_id(self) -> int:
        """The id of the newest event (0 when the log is empty): follow from here to see only new ones."""
        items = self._get("/events", {"limit": 1})["items"]
        return int(items[0]["id"]) if items else 0

    def events(
        self,
        after: int = 0,
        entity_type: Optional[str] = None,
        project_id: Optional[str] = None,
        *,
        follow: bool = False,
        page_size: int = 500,
        poll_interval: float = 1.0,
        max_backoff: float = 30.0,
    ) -> Iterator[Dict[str, Any]]:
        """Yields the events after the id ``after``, oldest first, each exactly once.

        Event ids are one gapless sequence, so replaying from the last id seen never misses or
        repeats one. With ``follow=True`` it keeps waiting for new events (polling every
        ``poll_interval`` seconds) and rides out outages: while the service cannot be reached, or
        answers 429 or 5xx, it waits (backing off up to ``max_backoff`` seconds) and then goes on
        from the last event it yielded. Without ``follow`` it stops at the newest event.
        """
        last = int(after)
        page_size = max(1, min(MAX_PAGE, page_size))
        failures = 0
        while True:
            query = {"after": last, "limit": page_size, "entity_type": entity_type, "project_id": project_id}
            try:
                page = self._get("/events", query)
            except (ConnectionFailed, ServerError, RateLimited) as err:
                if not follow:
                    raise
                wait = err.retry_after if isinstance(err, RateLimited) and err.retry_after else None
                if wait is None:
                    wait = random.uniform(0.5, 1.0) * min(max_backoff, 2.0**failures)
                failures += 1
                log.warning("events: %s; going on after event %d in %.1f s", err, last, wait)
                time.sleep(wait)
                continue
            failures = 0
            items = page.get("items") or []
            for event in items:
                event_id = int(event["id"])
                if event_id <= last:
                    continue
                last = event_id
                yield event
            if len(items) < page_size and not page.get("next_cursor"):
                if not follow:
                    return
                time.sleep(poll_interval)
