"""What the tests share: the service to test against (from the environment), a project of their own,
unique codes, and the schema codes the tests use.

Environment: REELBASE_URL and REELBASE_API_KEY (an Admin's key) are required; REELBASE_EMAIL and
REELBASE_PASSWORD (the same Admin) for the login tests; REELBASE_CONTROL_URL, where the test
harness restarts the gateway on request, for the event follower's restart test.
"""

from __future__ import annotations

import os
import sys
import threading
import unittest
import uuid
from typing import Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from reelbase import Conflict, Reelbase  # noqa: E402

URL = os.environ.get("REELBASE_URL", "")
API_KEY = os.environ.get("REELBASE_API_KEY", "")
EMAIL = os.environ.get("REELBASE_EMAIL", "")
PASSWORD = os.environ.get("REELBASE_PASSWORD", "")
CONTROL_URL = os.environ.get("REELBASE_CONTROL_URL", "")

STATUSES = ("wtg", "ip", "fin")
STEPS = ("layout", "anim", "comp")

_lock = threading.Lock()
_project: Optional[str] = None


def require_service() -> None:
    """Skips the module unless a service to test against is given."""
    if not URL or not API_KEY:
        raise unittest.SkipTest("set REELBASE_URL and REELBASE_API_KEY (an Admin's API key) to run the client tests")


def client(**kw) -> Reelbase:
    require_service()
    return Reelbase(kw.pop("url", URL), api_key=kw.pop("api_key", API_KEY), **kw)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def project_id() -> str:
    """One Project for this run, with the statuses and steps the tests use."""
    global _project
    with _lock:
        if _project is None:
            rb = client()
            for code in STATUSES:
                try:
                    rb.request("POST", "/schema/statuses", {"code": code, "name": code, "state": "in_progress"})
                except Conflict:
                    pass
            for code in STEPS:
                try:
                    rb.request("POST", "/schema/steps", {"code": code, "name": code})
                except Conflict:
                    pass
            code = unique("py")
            _project = rb.create("Project", {"name": f"Python client {code}", "code": code})["id"]
            rb.close()
        return _project
