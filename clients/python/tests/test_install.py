"""pip installs the client from its folder without a package index, and the installed copy works."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest

import support

FOLDER = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def setUpModule() -> None:
    support.require_service()


class InstallTest(unittest.TestCase):
    def test_pip_installs_it_offline_and_the_copy_imports(self) -> None:
        if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
            self.skipTest(f"{sys.executable} has no pip")
        with tempfile.TemporaryDirectory() as target:
            run = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--target", target, FOLDER],
                capture_output=True,
                text=True,
                timeout=120,
            )
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            code = (
                "import os, reelbase; "
                "assert reelbase.__file__.startswith(os.environ['TARGET']), reelbase.__file__; "
                "rb = reelbase.Reelbase(os.environ['REELBASE_URL'], api_key=os.environ['REELBASE_API_KEY']); "
                "print(rb.me()['role'])"
            )
            env = dict(os.environ, PYTHONPATH=target, TARGET=target)
            used = subprocess.run([sys.executable, "-c", code], env=env, cwd=target, capture_output=True, text=True, timeout=60)
            self.assertEqual(used.returncode, 0, used.stderr)
            self.assertEqual(used.stdout.strip(), "Admin")
        self.assertFalse(os.path.exists(os.path.join(FOLDER, "build")))  # nothing left behind in the folder


if __name__ == "__main__":
    unittest.main()
