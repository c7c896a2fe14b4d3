"""Batches (all or nothing, in order) and summaries with groups, through the client."""

from __future__ import annotations

import time
import unittest

import support
from reelbase import ReelbaseError, ValidationError


def setUpModule() -> None:
    support.require_service()


class BatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.rb = support.client()
        cls.pid = support.project_id()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.rb.close()

    def test_batch_creates_updates_and_deletes_in_order(self) -> None:
        rb = self.rb
        before = rb.last_event_id()
        doomed = rb.create("Shot", {"code": support.unique("BD")}, project_id=self.pid)
        prefix = support.unique("BT")
        # Writes reach the log a moment after they are answered: the batch's events are the ones after doomed's create.
        start = None
        deadline = time.monotonic() + 30
        while start is None and time.monotonic() < deadline:
            start = next((e["id"] for e in rb.events(after=before, entity_type="Shot") if e["entity_id"] == doomed["id"]), None)
            if start is None:
                time.sleep(0.1)
        self.assertIsNotNone(start, "doomed's create never reached the log")
        results = rb.batch(
            [
                {"request_type": "create", "entity_type": "Shot", "project_id": self.pid, "data": {"code": f"{prefix}_1"}},
                {"request_type": "create", "entity_type": "Shot", "project_id": self.pid, "data": {"code": f"{prefix}_2"}},
                {"request_type": "update", "entity_type": "Shot", "entity_id": doomed["id"], "data": {"cut_in": 5}},
                {"request_type": "delete", "entity_type": "Shot", "entity_id": doomed["id"]},
            ]
        )
        self.assertEqual(len(results), 4)
        self.assertEqual([r["data"]["code"] for r in results[:2]], [f"{prefix}_1", f"{prefix}_2"])
        self.assertEqual(results[2]["data"]["cut_in"], 5)
        self.assertIs(results[3], True)
        self.assertEqual(len(rb.find("Shot", [["code", "starts_with", prefix]])), 2)
        self.assertIsNone(rb.find_one("Shot", [["id", "is", doomed["id"]]]))
        ours = {results[0]["id"], results[1]["id"], doomed["id"]}
        deadline = time.monotonic() + 30
        while True:
            mine = [e for e in rb.events(after=start, entity_type="Shot") if e["entity_id"] in ours]
            if len(mine) >= 4 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual([e["action"] for e in mine], ["create", "create", "update", "delete"])
        ids = [e["id"] for e in mine]
        self.assertEqual(ids, list(range(ids[0], ids[0] + 4)))  # consecutive in the log

    def test_a_bad_request_in_a_batch_writes_nothing_and_says_where(self) -> None:
        rb = self.rb
        prefix = support.unique("BX")
        with self.assertRaises(ValidationError) as bad:
            rb.batch(
                [
                    {"request_type": "create", "entity_type": "Shot", "project_id": self.pid, "data": {"code": f"{prefix}_{n}"}}
                    for n in range(3)
                ]
                + [{"request_type": "create", "entity_type": "Shot", "project_id": self.pid, "data": {"code": f"{prefix}_3", "cut_in": "soon"}}]
            )
        self.assertEqual(bad.exception.status, 422)
        self.assertIn(["body", "requests", 3, "data", "cut_in"], [p["loc"] for p in bad.exception.problems])
        self.assertEqual(rb.find("Shot", [["code", "starts_with", prefix]]), [])
        with self.assertRaises(ReelbaseError):
            rb.batch([])


class SummarizeTest(unittest.TestCase):
    def test_sums_and_groups_by_step(self) -> None:
        rb = support.client()
        pid = support.project_id()
        prefix = support.unique("TK")
        for n, (step, minutes) in enumerate([("anim", 60), ("comp", 45), ("anim", 30), ("layout", 10), ("comp", None)]):
            data = {"name": f"{prefix}_{n}", "step": step}
            if minutes is not None:
                data["estimate_minutes"] = minutes
            rb.create("Task", data, project_id=pid)
        filters = [["project_id", "is", pid], ["name", "starts_with", prefix]]
        out = rb.summarize(
            "Task",
            filters,
            [{"field": "estimate_minutes", "type": "sum"}, {"field": "id", "type": "record_count"}],
            grouping=[{"field": "step", "type": "exact"}],
        )
        self.assertEqual(out["summaries"], {"estimate_minutes": 145, "id": 5})
        self.assertEqual(
            [(g["group_value"], g["summaries"]["estimate_minutes"], g["summaries"]["id"]) for g in out["groups"]],
            [("anim", 90, 2), ("comp", 45, 2), ("layout", 10, 1)],
        )
        flat = rb.summarize("Task", filters, [{"field": "estimate_minutes", "type": "maximum"}])
        self.assertEqual(flat["summaries"], {"estimate_minutes": 60})
        with self.assertRaises(ValidationError) as bad:
            rb.summarize("Task", [["no_such_field", "is", 1]], [{"field": "id", "type": "record_count"}])
        self.assertEqual(bad.exception.problems[0]["loc"][:3], ["body", "filters", 0])
        rb.close()


if __name__ == "__main__":
    unittest.main()
