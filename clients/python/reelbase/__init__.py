"""Reelbase's Python client: standard library only, Python 3.9 or newer.

    from reelbase import Reelbase
    rb = Reelbase("http://localhost:8080", api_key="svc_...")
    shots = rb.find("Shot", [["code", "starts_with", "SH"]], fields=["code"])

See README.md beside this package, and the service's OpenAPI document (``GET /openapi.json``).
"""

from __future__ import annotations

__version__ = "0.0.1"

from .client import Reelbase
from .errors import (
    AuthenticationError,
    BadRequest,
    Conflict,
    ConnectionFailed,
    NotFound,
    PermissionDenied,
    RateLimited,
    ReelbaseError,
    ServerError,
    ValidationError,
    WaitTimeout,
)

__all__ = [
    "Reelbase",
    "ReelbaseError",
    "ValidationError",
    "BadRequest",
    "AuthenticationError",
    "PermissionDenied",
    "NotFound",
    "Conflict",
    "RateLimited",
    "ServerError",
    "ConnectionFailed",
    "WaitTimeout",
    "__version__",
]
