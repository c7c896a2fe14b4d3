"""Retries through a proxy that misbehaves once: a create whose answer was lost is sent again and
makes one record; a 429's Retry-After is waited out; a PATCH whose answer was lost is not sent
twice; timeouts end a request that gets no answer."""

from __future__ import annotations

import time
import unittest

import support
from proxy import FaultyProxy, request_lines
from reelbase import ConnectionFailed, RateLimited, Reelbase


def setUpModule() -> None:
    support.require_service()


class RetriesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.pid = support.project_id()
        cls.rb = support.client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.rb.close()

    def test_create_retried_after_a_dropped_answer_makes_one_record(self) -> None:
        code = support.unique("RT")
        start = self.rb.last_event_id()
        with FaultyProxy(support.URL, "cut") as proxy:
            rb = support.client(url=proxy.url, backoff=0.05)
            shot = rb.create("Shot", {"code": code}, project_id=self.pid)
            rb.close()
            posts = request_lines(proxy, "POST /entities/Shot")
        self.assertEqual(len(posts), 2, proxy.requests)  # the first answer was cut, so it was sent again
        self.assertEqual(shot["data"]["code"], code)
        same = self.rb.find("Shot", [["code", "is", code]])
        self.assertEqual([s["id"] for s in same], [shot["id"]])  # one record, the one answered
        # One create event for it, not two (writes reach the log a moment after they are answered).
        def mine():
            return [e["action"] for e in self.rb.events(after=start, entity_type="Shot", project_id=self.pid) if e["entity_id"] == shot["id"]]

        deadline = time.monotonic() + 30
        while not mine() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)
        self.assertEqual(mine(), ["create"])

    def test_batch_retried_after_a_dropped_answer_writes_once(self) -> None:
        code = support.unique("RB")
        with FaultyProxy(support.URL, "cut") as proxy:
            rb = support.client(url=proxy.url, backoff=0.05)
            results = rb.batch([{"request_type": "create", "entity_type": "Shot", "project_id": self.pid, "data": {"code": code}}])
            rb.close()
            self.assertEqual(len(request_lines(proxy, "POST /batch")), 2)
        self.assertEqual([s["id"] for s in self.rb.find("Shot", [["code", "is", code]])], [results[0]["id"]])

    def test_update_is_not_sent_twice_when_its_answer_is_lost(self) -> None:
        shot = self.rb.create("Shot", {"code": support.unique("RU")}, project_id=self.pid)
        with FaultyProxy(support.URL, "cut") as proxy:
            rb = support.client(url=proxy.url, backoff=0.05)
            with self.assertRaises(ConnectionFailed):
                rb.update("Shot", shot["id"], {"cut_in": 7})
            rb.close()
            self.assertEqual(len(request_lines(proxy, "PATCH /entities/Shot/")), 1)
        self.assertEqual(self.rb.get("Shot", shot["id"])["data"]["cut_in"], 7)  # it did reach the service

    def test_429_is_retried_after_retry_after(self) -> None:
        with FaultyProxy(support.URL, "rate_limit", retry_after=2) as proxy:
            rb = support.client(url=proxy.url, backoff=0.01)
            began = time.monotonic()
            shot = rb.create("Shot", {"code": support.unique("RL")}, project_id=self.pid)
            took = time.monotonic() - began
            rb.close()
            posts = [t for t, line in proxy.requests if line.startswith("POST /entities/Shot")]
        self.assertEqual(len(posts), 2)
        self.assertGreaterEqual(posts[1] - posts[0], 1.9)  # waited as asked, not the 0.01 s backoff
        self.assertLess(took, 10)
        self.assertEqual(self.rb.get("Shot", shot["id"])["id"], shot["id"])

    def test_429_past_the_retries_raises_rate_limited(self) -> None:
        with FaultyProxy(support.URL, "rate_limit", retry_after=1) as proxy:
            rb = support.client(url=proxy.url, retries=0)
            with self.assertRaises(RateLimited) as limited:
                rb.find("Shot", [])
            rb.close()
        self.assertEqual((limited.exception.status, limited.exception.code, limited.exception.retry_after), (429, "rate_limited", 1.0))

    def test_timeouts_are_on_by_default_and_end_a_silent_request(self) -> None:
        rb = Reelbase(support.URL, api_key=support.API_KEY)
        self.assertEqual((rb._transport.connect_timeout, rb._transport.read_timeout), (10.0, 30.0))
        with FaultyProxy(support.URL, "stall") as proxy:
            rb = support.client(url=proxy.url, read_timeout=0.5, retries=2, backoff=0.01)
            began = time.monotonic()
            with self.assertRaises(ConnectionFailed) as silent:
                rb.find("Shot", [])
            took = time.monotonic() - began
            rb.close()
            self.assertEqual(len(request_lines(proxy, "POST /entities/Shot/query")), 3)  # a read: retried twice
        self.assertEqual(silent.exception.code, "timeout")
        self.assertLess(took, 5)


if __name__ == "__main__":
    unittest.main()
