"""A 200 MB movie uploaded as a Version's reviewable: streamed from disk with flat memory and a
progress callback, then transcoded (wait_reviewable)."""

from __future__ import annotations

import os
import resource
import tempfile
import tracemalloc
import unittest

import support
from media import write_avi
from reelbase import NotFound

SIZE = 200 * 1024 * 1024


def setUpModule() -> None:
    support.require_service()


class UploadTest(unittest.TestCase):
    def test_200_mb_upload_streams_with_flat_memory_and_progress(self) -> None:
        rb = support.client()
        pid = support.project_id()
        version = rb.create("Version", {"code": support.unique("v")}, project_id=pid)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "plate_v001.avi")
            with open(path, "wb") as f:
                write_avi(f, SIZE)
            size = os.path.getsize(path)
            self.assertGreaterEqual(size, SIZE)

            calls = []
            rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
            tracemalloc.start()
            tracemalloc.reset_peak()
            try:
                answer = rb.upload_reviewable(version["id"], path, progress=lambda sent, total: calls.append((sent, total)))
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            rss_growth_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024

        self.assertEqual(answer["status"], "pending")
        self.assertEqual(answer["representation"]["data"]["version"], {"type": "Version", "id": version["id"]})
        # Memory: a chunk (1 MiB) and change, not the file.
        self.assertLess(peak, 8 * 1024 * 1024, f"peak traced memory {peak} bytes")
        self.assertLess(rss_growth_mib, 48, f"max RSS grew {rss_growth_mib:.0f} MiB")
        # Progress: from 0 to the whole file, never backwards, chunk by chunk.
        self.assertEqual(calls[0], (0, size))
        self.assertEqual(calls[-1], (size, size))
        self.assertTrue(all(b[0] >= a[0] for a, b in zip(calls, calls[1:])))
        self.assertGreater(len(calls), 150)

        status = rb.wait_reviewable(version["id"], timeout=240)
        self.assertEqual(status["status"], "done", status.get("transcode_error"))
        self.assertEqual(status["review_kind"], "video")
        self.assertTrue(status["review_media_key"])
        self.assertEqual(rb.reviewable(version["id"])["representation_id"], answer["representation"]["id"])
        rb.close()

    def test_wait_for_a_version_that_does_not_exist_is_not_found(self) -> None:
        rb = support.client()
        with self.assertRaises(NotFound):
            rb.wait_reviewable("0190a000-0000-7000-8000-000000000000", timeout=5)
        rb.close()


if __name__ == "__main__":
    unittest.main()
