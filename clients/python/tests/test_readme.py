"""The five-line example of the project's README runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest

import support

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "README.md")


def setUpModule() -> None:
    support.require_service()


class ReadmeTest(unittest.TestCase):
    def test_the_pipeline_clients_python_example_runs(self) -> None:
        with open(README, encoding="utf-8") as f:
            text = f.read()
        section = text[text.index("## Pipeline clients") :]
        example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
        self.assertEqual(len(example.strip().splitlines()), 5)
        env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(README), "clients", "python"))
        run = subprocess.run([sys.executable, "-c", example], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("'code': 'SH010'", run.stdout)
        self.assertIn("'cut_in': 1001", run.stdout)


if __name__ == "__main__":
    unittest.main()
