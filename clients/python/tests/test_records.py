"""Records through the client: create, get, update, delete, revive, find (with link traversal,
fields and order), find_one, lazy paging, schema, notes, errors by status, logins, and a key that
never shows."""

from __future__ import annotations

import io
import logging
import unittest
import uuid

import support
from reelbase import (
    AuthenticationError,
    Conflict,
    NotFound,
    PermissionDenied,
    Reelbase,
    ReelbaseError,
    ValidationError,
)


def setUpModule() -> None:
    support.require_service()


class RecordsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.rb = support.client()
        cls.pid = support.project_id()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.rb.close()

    def test_create_update_delete_revive(self) -> None:
        rb = self.rb
        code = support.unique("SH")
        shot = rb.create("Shot", {"code": code}, project_id=self.pid)
        self.assertEqual(shot["entity_type"], "Shot")
        self.assertEqual(shot["project_id"], self.pid)
        self.assertEqual(shot["data"]["code"], code)
        self.assertEqual(rb.get("Shot", shot["id"])["data"]["code"], code)

        updated = rb.update("Shot", shot["id"], {"cut_in": 1001}, status="ip")
        self.assertEqual(updated["status"], "ip")
        self.assertEqual(updated["data"], {"code": code, "cut_in": 1001})
        # A write made with the record as it was before is refused, not applied.
        with self.assertRaises(Conflict) as stale:
            rb.update("Shot", shot["id"], {"cut_out": 1100}, if_match=shot["updated_at"])
        self.assertEqual(stale.exception.status, 409)
        self.assertEqual(stale.exception.code, "stale_write")
        self.assertEqual(rb.update("Shot", shot["id"], {"cut_out": 1100}, if_match=updated["updated_at"])["data"]["cut_out"], 1100)

        self.assertTrue(rb.delete("Shot", shot["id"])["retired"])
        with self.assertRaises(NotFound):
            rb.get("Shot", shot["id"])
        self.assertIsNone(rb.find_one("Shot", [["code", "is", code]]))
        self.assertEqual(rb.revive("Shot", shot["id"])["id"], shot["id"])
        self.assertEqual(rb.find_one("Shot", [["code", "is", code]])["id"], shot["id"])

    def test_find_through_links_with_fields_order_and_limit(self) -> None:
        rb = self.rb
        seq_code = support.unique("SQ")
        other_code = support.unique("SQ")
        seq = rb.create("Sequence", {"code": seq_code}, project_id=self.pid)
        other = rb.create("Sequence", {"code": other_code}, project_id=self.pid)
        prefix = support.unique("SH")
        for n in (30, 10, 20):
            rb.create("Shot", {"code": f"{prefix}_{n}", "sequence": {"type": "Sequence", "id": seq["id"]}}, project_id=self.pid)
        rb.create("Shot", {"code": f"{prefix}_99", "sequence": {"type": "Sequence", "id": other["id"]}}, project_id=self.pid)

        found = rb.find(
            "Shot",
            [["sequence.Sequence.code", "is", seq_code]],
            fields=["code"],
            order=[{"field": "code", "direction": "asc"}],
            limit=None,
        )
        self.assertEqual([s["data"]["code"] for s in found], [f"{prefix}_10", f"{prefix}_20", f"{prefix}_30"])
        self.assertEqual(set(found[0]["data"]), {"code"})  # only the fields asked for
        desc = rb.find("Shot", [["code", "starts_with", prefix]], order=[{"field": "code", "direction": "desc"}], limit=2)
        self.assertEqual([s["data"]["code"] for s in desc], [f"{prefix}_99", f"{prefix}_30"])

        one = rb.find_one("Shot", [["code", "is", f"{prefix}_20"]])
        self.assertIsInstance(one, dict)
        self.assertEqual(one["data"]["sequence"], {"type": "Sequence", "id": seq["id"]})
        self.assertIsNone(rb.find_one("Shot", [["code", "is", f"{prefix}_404"]]))

    def test_iter_find_fetches_pages_only_as_they_are_read(self) -> None:
        rb = support.client()
        prefix = support.unique("LZ")
        for n in range(5):
            rb.create("Shot", {"code": f"{prefix}_{n}"}, project_id=self.pid)
        sent = []
        real = rb._transport.request

        def counting(method, path, **kw):
            sent.append((method, path))
            return real(method, path, **kw)

        rb._transport.request = counting
        it = rb.iter_find("Shot", [["code", "starts_with", prefix]], fields=["code"], order=[{"field": "code", "direction": "asc"}], page_size=2)
        self.assertEqual(sent, [])  # nothing asked before the first record is wanted
        self.assertEqual(next(it)["data"]["code"], f"{prefix}_0")
        self.assertEqual(len(sent), 1)
        next(it)
        self.assertEqual(len(sent), 1)
        self.assertEqual(next(it)["data"]["code"], f"{prefix}_2")
        self.assertEqual(len(sent), 2)
        self.assertEqual([s["data"]["code"] for s in it], [f"{prefix}_3", f"{prefix}_4"])
        self.assertEqual(len(sent), 3)
        self.assertTrue(all(p.endswith("/query") for _, p in sent))
        rb.close()

    def test_schema_and_notes(self) -> None:
        rb = self.rb
        schema = rb.schema()
        types = {t["code"]: t for t in schema["entity_types"]}
        self.assertIn("Shot", types)
        self.assertIn("code", {f["code"] for f in types["Shot"]["fields"]})

        shot = rb.create("Shot", {"code": support.unique("SH")}, project_id=self.pid)
        self.assertEqual(rb.notes_for("Shot", shot["id"]), [])
        first = rb.create("Note", {"subject": "first", "content": "more smoke", "links": [{"type": "Shot", "id": shot["id"]}]}, project_id=self.pid)
        second = rb.create("Note", {"subject": "second", "content": "less smoke", "links": [{"type": "Shot", "id": shot["id"]}]}, project_id=self.pid)
        rb.create("Note", {"subject": "elsewhere", "content": "x", "links": []}, project_id=self.pid)
        self.assertEqual([n["id"] for n in rb.notes_for("Shot", shot["id"])], [first["id"], second["id"]])
        with self.assertRaises(NotFound):
            rb.notes_for("Shot", str(uuid.uuid4()))

    def test_errors_carry_status_code_detail_and_problems(self) -> None:
        rb = self.rb
        with self.assertRaises(ValidationError) as bad:
            rb.create("Shot", {"code": "SH", "no_such_field": 1, "cut_in": "not a number"}, project_id=self.pid)
        err = bad.exception
        self.assertIsInstance(err, ReelbaseError)
        self.assertEqual(err.status, 422)
        locs = [tuple(p["loc"]) for p in err.problems]
        self.assertIn(("body", "data", "no_such_field"), locs)
        self.assertIn(("body", "data", "cut_in"), locs)
        self.assertIn("no_such_field", err.detail)

        with self.assertRaises(ValidationError) as bad_filter:
            rb.find("Shot", [["code", "is", "x"], ["nope", "is", 1]])
        self.assertEqual(bad_filter.exception.problems[0]["loc"][:3], ["body", "filters", 1])

        with self.assertRaises(NotFound) as missing:
            rb.get("Shot", str(uuid.uuid4()))
        self.assertEqual((missing.exception.status, missing.exception.code), (404, "not_found"))
        self.assertTrue(missing.exception.detail)

        with self.assertRaises(AuthenticationError) as unauth:
            support.client(api_key="svc_" + "0" * 40, retries=0).find("Shot", [])
        self.assertEqual((unauth.exception.status, unauth.exception.code), (401, "unauthenticated"))

    def test_login_with_email_and_password_and_a_role_that_may_not_write(self) -> None:
        if not support.EMAIL or not support.PASSWORD:
            self.skipTest("REELBASE_EMAIL and REELBASE_PASSWORD not set")
        admin = Reelbase(support.URL, email=support.EMAIL, password=support.PASSWORD)
        self.assertEqual(admin.me()["role"], "Admin")
        self.assertEqual(admin.me()["auth"], "token")
        email = f"{support.unique('viewer')}@studio.test"
        admin.request("POST", "/auth/register", {"email": email, "password": "viewer-password-1", "name": "Vi Ewer", "role": "Viewer"})
        viewer = Reelbase(support.URL, email=email, password="viewer-password-1")
        self.assertEqual(viewer.find("Project", [["id", "is", self.pid]])[0]["id"], self.pid)
        with self.assertRaises(PermissionDenied) as denied:
            viewer.create("Shot", {"code": support.unique("SH")}, project_id=self.pid)
        self.assertEqual((denied.exception.status, denied.exception.code), (403, "forbidden"))
        with self.assertRaises(AuthenticationError):
            Reelbase(support.URL, email=email, password="wrong-password", retries=0).me()

    def test_the_api_key_never_shows(self) -> None:
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        logger = logging.getLogger("reelbase")
        logger.addHandler(handler)
        old = logger.level
        logger.setLevel(logging.DEBUG)
        try:
            rb = support.client(retries=1, backoff=0.01)
            rb.find("Shot", [], limit=1)
            try:
                rb.get("Shot", str(uuid.uuid4()))
            except NotFound as err:
                shown = [str(err), repr(err), repr(err.body)]
            unreachable = support.client(url="http://127.0.0.1:9", retries=1, backoff=0.01, connect_timeout=1)
            with self.assertRaises(ReelbaseError) as down:
                unreachable.find("Shot", [])
            shown += [str(down.exception), repr(down.exception), repr(rb), str(rb), repr(vars(rb)), repr(vars(rb._auth))]
        finally:
            logger.removeHandler(handler)
            logger.setLevel(old)
        logged = stream.getvalue()
        self.assertIn("GET /entities/Shot/", logged)  # the debug log was on
        self.assertIn("retrying", logged)
        for text in shown + [logged]:
            self.assertNotIn(support.API_KEY, text)
            self.assertNotIn(support.API_KEY[4:12], text)
        self.assertIn("api_key=<redacted>", repr(rb))


if __name__ == "__main__":
    unittest.main()
