"""The event log through the client: a replay after an id, and a follower that rides out a
restart of the gateway with no event missed and none repeated."""

from __future__ import annotations

import json
import logging
import threading
import time
import unittest
import urllib.request

import support


def setUpModule() -> None:
    support.require_service()


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _wait_for(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class EventsTest(unittest.TestCase):
    def test_replay_after_an_id_in_order(self) -> None:
        rb = support.client()
        pid = support.project_id()
        start = rb.last_event_id()
        shot = rb.create("Shot", {"code": support.unique("EV")}, project_id=pid)
        rb.update("Shot", shot["id"], {"cut_in": 1})
        rb.delete("Shot", shot["id"])
        rb.create("Sequence", {"code": support.unique("EQ")}, project_id=pid)
        # Writes reach the log a moment after they are answered.
        _wait_for(lambda: len(list(rb.events(after=start))) >= 4, 30, "the four events")
        events = list(rb.events(after=start, entity_type="Shot"))
        self.assertEqual([(e["entity_id"], e["action"]) for e in events], [(shot["id"], "create"), (shot["id"], "update"), (shot["id"], "delete")])
        self.assertEqual(events[1]["changes"], {"cut_in": 1})
        everything = list(rb.events(after=start, page_size=2))
        self.assertEqual(len(everything), 4)
        self.assertEqual([e["id"] for e in everything], sorted(e["id"] for e in everything))
        self.assertEqual(list(rb.events(after=everything[-1]["id"])), [])
        rb.close()

    @unittest.skipUnless(support.CONTROL_URL, "REELBASE_CONTROL_URL not set: nothing can restart the gateway")
    def test_follower_rides_out_a_gateway_restart_without_gap_or_duplicate(self) -> None:
        rb = support.client()
        pid = support.project_id()
        prefix = support.unique("FW")
        start = rb.last_event_id()
        first = [rb.create("Shot", {"code": f"{prefix}_{n:03d}"}, project_id=pid)["id"] for n in range(60)]
        total = 100
        got = []
        finished = threading.Event()
        follower = support.client(retries=1, backoff=0.05, connect_timeout=2, read_timeout=5)
        warnings = _Collect()
        logging.getLogger("reelbase").addHandler(warnings)

        def follow() -> None:
            try:
                for event in follower.events(after=start, entity_type="Shot", project_id=pid, follow=True, page_size=10, poll_interval=0.2, max_backoff=1.0):
                    got.append(event)
                    time.sleep(0.05)  # a slow consumer: most pages are still to be read when the gateway goes
                    if len(got) >= total:
                        break
            finally:
                finished.set()

        threading.Thread(target=follow, daemon=True).start()
        try:
            _wait_for(lambda: len(got) >= 15, 30, "the follower's first events")
            at_restart = len(got)
            req = urllib.request.Request(support.CONTROL_URL.rstrip("/") + "/restart-gateway", data=b"{}", method="POST")
            with urllib.request.urlopen(req, timeout=120) as res:
                self.assertEqual(json.loads(res.read())["restarted"], "gateway")
            second = [rb.create("Shot", {"code": f"{prefix}_{n:03d}"}, project_id=pid)["id"] for n in range(60, 100)]
            self.assertTrue(finished.wait(60), f"the follower stopped at {len(got)} events")
        finally:
            logging.getLogger("reelbase").removeHandler(warnings)
        self.assertLess(at_restart, 60)
        self.assertTrue(any("going on after event" in m for m in warnings.messages), warnings.messages)  # it did meet the outage
        ids = [e["id"] for e in got]
        self.assertEqual(len(ids), len(set(ids)))  # no duplicate
        self.assertEqual(ids, sorted(ids))
        self.assertEqual([e["entity_id"] for e in got], first + second)  # no gap
        self.assertEqual([e["id"] for e in rb.events(after=start, entity_type="Shot", project_id=pid)], ids)
        follower.close()
        rb.close()


if __name__ == "__main__":
    unittest.main()
