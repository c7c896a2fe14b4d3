"""Paging through 2,500 records: find and iter_find follow the cursors to the last page."""

from __future__ import annotations

import unittest
from concurrent.futures import ThreadPoolExecutor

import support

COUNT = 2500


def setUpModule() -> None:
    support.require_service()


class PagingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.rb = support.client()
        cls.pid = support.project_id()
        cls.prefix = support.unique("PG")
        with ThreadPoolExecutor(8) as pool:
            created = list(pool.map(lambda n: cls.rb.create("Shot", {"code": f"{cls.prefix}_{n:05d}"}, project_id=cls.pid)["id"], range(COUNT)))
        cls.created = created

    @classmethod
    def tearDownClass(cls) -> None:
        cls.rb.close()

    def test_find_returns_all_2500_in_order(self) -> None:
        shots = self.rb.find("Shot", [["code", "starts_with", self.prefix]], fields=["code"], order=[{"field": "code", "direction": "asc"}], limit=None)
        self.assertEqual(len(shots), COUNT)  # more than one page (500 a page by default, 1000 at most)
        self.assertEqual([s["data"]["code"] for s in shots], [f"{self.prefix}_{n:05d}" for n in range(COUNT)])
        self.assertEqual([s["id"] for s in shots], self.created)

    def test_iter_find_pages_lazily_each_record_once(self) -> None:
        seen = [s["id"] for s in self.rb.iter_find("Shot", [["code", "starts_with", self.prefix]], fields=["code"], page_size=1000)]
        self.assertEqual(len(seen), COUNT)
        self.assertEqual(set(seen), set(self.created))

    def test_limit_stops_across_pages(self) -> None:
        shots = self.rb.find("Shot", [["code", "starts_with", self.prefix]], order=[{"field": "code", "direction": "desc"}], limit=1234, page_size=500)
        self.assertEqual([s["data"]["code"] for s in shots], [f"{self.prefix}_{n:05d}" for n in range(COUNT - 1, COUNT - 1235, -1)])


if __name__ == "__main__":
    unittest.main()
