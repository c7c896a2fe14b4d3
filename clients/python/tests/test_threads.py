"""One client shared by 8 threads: every call answers its own thread, nothing is lost or doubled."""

from __future__ import annotations

import threading
import unittest

import support

THREADS = 8
PER_THREAD = 30


def setUpModule() -> None:
    support.require_service()


class ThreadsTest(unittest.TestCase):
    def test_eight_threads_share_one_client(self) -> None:
        rb = support.client()
        pid = support.project_id()
        prefix = support.unique("TH")
        start = threading.Barrier(THREADS)
        errors = []
        made = {}

        def work(t: int) -> None:
            try:
                start.wait()
                mine = []
                for n in range(PER_THREAD):
                    code = f"{prefix}_{t}_{n:03d}"
                    shot = rb.create("Shot", {"code": code}, project_id=pid)
                    assert shot["data"]["code"] == code, shot
                    shot = rb.update("Shot", shot["id"], {"cut_in": t * 1000 + n})
                    assert shot["data"] == {"code": code, "cut_in": t * 1000 + n}, shot
                    assert rb.get("Shot", shot["id"])["data"]["code"] == code
                    mine.append(shot["id"])
                found = rb.find("Shot", [["code", "starts_with", f"{prefix}_{t}_"]], order=[{"field": "code", "direction": "asc"}], page_size=7)
                assert [s["id"] for s in found] == mine, (t, len(found))
                made[t] = mine
            except Exception as err:  # noqa: BLE001 - reported below
                errors.append((t, repr(err)))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
        self.assertEqual(errors, [])
        self.assertEqual(sorted(made), list(range(THREADS)))
        everything = rb.find("Shot", [["code", "starts_with", f"{prefix}_"]], fields=["cut_in"])
        self.assertEqual(len(everything), THREADS * PER_THREAD)
        self.assertEqual({s["id"] for s in everything}, {i for ids in made.values() for i in ids})
        rb.close()


if __name__ == "__main__":
    unittest.main()
