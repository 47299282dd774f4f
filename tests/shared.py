"""Where the files shared beside the repository are: read at test time, never copied in.

``../shared/`` (next to the clone) holds a corpus of real robots.txt files and Google's verdicts
on some of them. Tests that need it are skipped when it is absent. The benchmarks read the corpus
through this module too (benchmarks/_common.py): it exists only beside a clone, so its path
belongs with the clone's tests, not in the installed package.
"""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
#: Real robots.txt files, one per site, named after the site.
CORPUS = SHARED / "corpus" / "robotstxt"
#: Google's matcher's verdicts on files of CORPUS (see its probes.md).
CONFORMANCE_PROBES = SHARED / "conformance" / "google_corpus_probes.jsonl"
