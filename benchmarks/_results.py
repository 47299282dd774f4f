"""Where every benchmark writes its figures: ``benchmarks/results/<name>.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def write_figures(name: str, figures: dict[str, Any]) -> None:
    """Write *figures* as ``results/<name>.json`` beside the printed tables, and say where."""
    path = RESULTS / f"{name}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(figures, indent=2, default=str) + "\n")
    try:
        shown = path.relative_to(Path.cwd())
    except ValueError:  # run from elsewhere than the repository root
        shown = path
    print(f"\nFigures written to {shown}")
