"""What every reproduction writes: a PNG, the data, and a report of each claim checked.

A claim is a sentence from the paper (or a check of ours),
the number the paper gives if any, the number we
measured, and a verdict: ``reproduced`` or ``not reproduced``. The report never hides a failure.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path


@dataclasses.dataclass
class Claim:
    """One checked statement."""

    id: str
    statement: str
    paper: str
    ours: str
    reproduced: bool

    @property
    def verdict(self) -> str:
        return "reproduced" if self.reproduced else "not reproduced"


@dataclasses.dataclass
class Report:
    """The outcome of one reproduction: claims plus the files written."""

    name: str
    title: str
    claims: list = dataclasses.field(default_factory=list)
    files: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)

    def claim(self, id, statement, *, paper, ours, reproduced) -> Claim:
        c = Claim(id, statement, str(paper), str(ours), bool(reproduced))
        self.claims.append(c)
        return c

    def to_text(self) -> str:
        lines = [f"# {self.title}", ""]
        for c in self.claims:
            lines += [f"- [{c.verdict}] {c.id}: {c.statement}",
                      f"    paper: {c.paper}", f"    ours:  {c.ours}"]
        if self.notes:
            lines += ["", "Notes:"] + [f"- {n}" for n in self.notes]
        if self.files:
            lines += ["", "Files:"] + [f"- {f}" for f in self.files]
        return "\n".join(lines) + "\n"

    def write(self, out_dir) -> Path:
        """Write ``report.md`` and ``report.json`` into ``out_dir``; returns the markdown path."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.files += [name for name in (str(out / "report.md"), str(out / "report.json"))
                       if name not in self.files]  # the Files: list names every file written
        (out / "report.json").write_text(json.dumps(
            {"name": self.name, "title": self.title, "notes": self.notes, "files": self.files,
             "claims": [dataclasses.asdict(c) | {"verdict": c.verdict} for c in self.claims]},
            indent=2))
        path = out / "report.md"
        path.write_text(self.to_text())
        return path


def progress_bar(items, enabled: bool, desc: str):
    """``items`` with a progress bar on stderr (tqdm, as the engine's ``run``/``sweep`` show one
    over chunks) when ``enabled``: one tick per item of a reproduction's own loops."""
    if not enabled:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, leave=False)
