"""The documentation's catalogue generator (``docs/_ext/catalogue.py``) covers the registry.

No Sphinx build here: the generator's pages are written to a temporary folder and read back.
"""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxdp.algorithms import PROVENANCES, REGISTRY

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def catalogue():
    spec = importlib.util.spec_from_file_location("catalogue", ROOT / "docs" / "_ext" / "catalogue.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["catalogue"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages(catalogue, tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    catalogue.write_catalogue(out)
    return {p.stem: p.read_text() for p in (out / "catalogue").glob("*.md")}


def test_every_registered_algorithm_has_a_page_listed_in_the_index(pages):
    assert set(pages) == set(REGISTRY) | {"index"}
    for name in REGISTRY:
        assert f"[`{name}`]({name}.md)" in pages["index"]
        assert f"\n{name}\n" in pages["index"]  # in the toctree


def test_each_page_shows_params_with_defaults_and_meanings(pages, catalogue):
    for name, cls in REGISTRY.items():
        fields = catalogue.params_fields(cls.params_type)
        assert fields, name
        for f in fields:
            assert f"| `{f.name}` | `{f.default}` |" in pages[name].replace("\\|", "|"), (name, f)
        assert all(f.meaning for f in fields), (name, [f.name for f in fields if not f.meaning])


def test_privacy_status_matches_what_privacy_returns(pages, catalogue):
    entries = {e.name: e for e in catalogue.entries()}
    assert entries["dgd"].private is False and "**Private:** no" in pages["dgd"]
    assert entries["dp_dgd"].private is True and "**Private:** yes" in pages["dp_dgd"]
    assert "headline accountant" in pages["dp_dgd"]
    assert all(e.private is not None for e in entries.values()), \
        {n: e.privacy for n, e in entries.items() if e.private is None}


def test_reconstructions_and_reference_tests_are_read_from_the_code(catalogue):
    entries = {e.name: e for e in catalogue.entries()}
    assert entries["dp_nids"].status.startswith("reconstruction")
    assert entries["dpp2"].status.startswith("the paper's algorithm")
    assert entries["dgd"].status.startswith("a standard method")
    assert "lt_admm_dp" in entries["lt_admm_dp"].reference  # through a helper in the test file
    assert entries["dgd"].reference == ("dgd",)


def test_params_tables_come_from_the_declared_metadata(catalogue, pages):
    """The meaning, domain, shape and unit columns are the fields' ``jaxdp.param`` metadata."""
    import chex

    from jaxdp import param
    from jaxdp.algorithms import DPDGDParams, param_specs

    fields = {f.name: f for f in catalogue.params_fields(DPDGDParams)}
    spec = param_specs(DPDGDParams)["clip"]
    assert (fields["clip"].meaning, fields["clip"].domain, fields["clip"].shape) == \
        (spec.doc, "> 0", "scalar or (N,)")
    assert f"| `clip` | `{fields['clip'].default}` | {spec.doc} | > 0 | scalar or (N,) |  |" \
        in pages["dp_dgd"]
    assert fields["clip"].default == str(DPDGDParams().clip)

    @chex.dataclass(frozen=True)
    class P:
        rate: float = param(0.5, domain="probability", per_agent=False, doc="ρ, a rate", unit="1/s")

    (f,) = catalogue.params_fields(P)
    assert (f.default, f.meaning, f.domain, f.shape, f.unit) == \
        ("0.5", "ρ, a rate", "in [0, 1]", "scalar", "1/s")


def test_each_page_shows_the_declared_citations(pages):
    """Each page cites what its class declares (indices written as text: ``jaxdp._text``)."""
    from jaxdp._text import plain_scripts

    for name, cls in REGISTRY.items():
        assert cls.cites, f"{name} declares no cites"
        assert cls.provenance in PROVENANCES, f"{name} declares no provenance"
        cites = plain_scripts("; ".join(cls.cites))
        assert f"**Cites:** {cites}" in pages[name].replace("\\|", "|")
        assert "^{" not in cites, name


def test_escape_bars_leaves_literals_and_tables_alone(catalogue):
    assert catalogue.escape_bars("η(|N_i|, 1)") == "η(\\|N_i\\|, 1)"
    assert catalogue.escape_bars("``a|b|c`` and |E|") == "``a|b|c`` and \\|E\\|"
    assert catalogue.escape_bars("| a | b |") == "| a | b |"


def test_getting_started_example_runs_at_a_small_size():
    """The site's first-run example, with seeds, steps and data shrunk so that it runs in seconds."""
    import re

    text = (ROOT / "docs" / "getting_started.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "jaxdp.run(" in b]
    small = re.sub(r"seeds=\d+", "seeds=2", re.sub(r"steps=\d+", "steps=5", block))
    small = small.replace("m=200", "m=10")
    namespace = {}
    exec(compile(small, "getting_started.md", "exec"), namespace)
    assert namespace["trace"].meta["n_diverged"] == 0
    assert namespace["report"].epsilon_max > 0


def test_the_channels_api_page_documents_every_public_name():
    """docs/api/channels.md has a directive for each name of ``jaxdp.channels.__all__``."""
    import re

    from jaxdp import channels

    text = (ROOT / "docs" / "api" / "channels.md").read_text()
    directive = r"^\.\. (?:auto|py:)?(?:function|class|data):: jaxdp\.channels\.(\w+)"
    documented = set(re.findall(directive, text, re.M))
    assert documented == set(channels.__all__), (set(channels.__all__) - documented,
                                                 documented - set(channels.__all__))
    assert "channels\n" in (ROOT / "docs" / "api" / "index.md").read_text()  # in the toctree


def test_the_privacy_table_page_is_the_writers_output_with_short_key_cells():
    """docs/privacy_table.md is what the audit's writer makes of docs/audit_table.json, and its
    table keeps every cell short (the long text goes to the list under it): rows of one or two
    lines on the site, the key columns visible without scrolling."""
    import json

    from jaxdp.experiments.audit import privacy_table

    rows = json.loads((ROOT / "docs" / "audit_table.json").read_text())
    stored = (ROOT / "docs" / "privacy_table.md").read_text()
    assert stored == privacy_table(rows), "re-run `jaxdp reproduce audit-table` and copy it"
    table = [line for line in stored.splitlines() if line.startswith("| `")]
    assert len(table) == sum(not r["control"] for r in rows)
    for line in table:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == 7 and max(map(len, cells)) <= 40, cells
    for r in rows:
        if not r["control"]:
            assert f"- `{r['algorithm']}`: " in stored  # its relation, release and assumptions


def _report_pages():
    """README.md and the site's pages with a ```python block that computes a privacy report."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in pages if any("privacy(" in b for b in _python_blocks(p))]


def _python_blocks(page):
    import re

    return [b for b in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
            if "jax.distributed" not in b]  # the cluster example: tests/test_multiprocess.py


def _shrunk(block: str) -> str:
    """``block`` with its runs made tiny (seeds=2, steps=3 in run/sweep/final_metrics calls) and
    float64 left to the caller's context (on where the page turns it on); a privacy report keeps
    its steps (its ε is the point)."""
    import re

    lines = []
    for line in block.replace('jax.config.update("jax_enable_x64", True)', "pass").splitlines():
        line = re.sub(r"seeds=\d+", "seeds=2", line)
        if re.search(r"\b(run|sweep|final_metrics)\(", line):
            line = re.sub(r"steps=\d+", "steps=3", line)
        lines.append(line)
    return "\n".join(lines)


@pytest.mark.parametrize("page", [
    pytest.param(p, marks=pytest.mark.slow) if p.name == "models.md" else p
    for p in _report_pages()], ids=lambda p: p.name)
def test_every_printed_privacy_report_on_the_site_is_finite(page, tmp_path, monkeypatch):
    """The page's ```python blocks run in order in one namespace (runs shrunk, reports not), in
    float64 only where the page turns it on; every report they make or print has a finite ε (a
    newcomer's first ε is a real one), and every ε the page shows for a block (a ``# ε = ...``
    comment, an ``ε = ...`` line of the output block under it) is one that block prints."""
    import contextlib
    import io
    import re

    import jax

    from jaxdp.privacy import PrivacyReport

    monkeypatch.chdir(tmp_path)
    namespace, printed = {}, io.StringIO()
    blocks = _python_blocks_and_shown(page)
    x64 = any("jax_enable_x64" in code for code, _ in blocks)  # as the page runs (a lattice ε
    with jax.enable_x64(x64):                                 # carries float32's rounding)
        for block, shown in blocks:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                exec(compile(_shrunk(block), page.name, "exec"), namespace)  # noqa: S102
            printed.write(out.getvalue())
            _assert_shown_epsilons_are_printed(page.name, block, shown, out.getvalue())
    reports = [v for v in namespace.values() if isinstance(v, PrivacyReport)]
    assert reports or "ε = " in printed.getvalue(), f"{page.name}: no report made"
    for report in reports:
        assert np.isfinite(report.epsilon_max), (page.name, report.summary())
    assert not re.search(r"ε = inf|\binf\b", printed.getvalue()), printed.getvalue()


def _python_blocks_and_shown(page):
    """``(code, shown)`` per ```python block of ``page`` (as :func:`_python_blocks`): ``shown``
    is the body of the ```text block right after it (the output the page shows), or ``""``."""
    import re

    fence = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.S | re.M)
    blocks = [(m[1], m[2]) for m in fence.finditer(page.read_text())]
    return [(body, blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" else "")
            for i, (info, body) in enumerate(blocks)
            if info == "python" and "jax.distributed" not in body]


def _shown_epsilons(code: str, shown: str) -> list[str]:
    """The ε a page shows for a block: ``# ε = 7.1 ...`` comments in its code and ``ε = ...``
    lines of its output block, each as its ``ε = VALUE`` head."""
    import re

    heads = re.findall(r"#\s*(ε = [^\s,)]+)", code)
    return heads + re.findall(r"^(ε = \S+)", shown, re.M)


def _assert_shown_epsilons_are_printed(page, code, shown, printed):
    """Every ε the page shows for a block is one its reports print (runs are shrunk, reports are
    not: the ε is exact), so a stale number on the page fails here."""
    import re

    heads = {re.match(r"ε = \S+", line)[0] for line in printed.splitlines()
             if re.match(r"ε = \S+", line)}
    for head in _shown_epsilons(code, shown):
        assert head in heads, (page, head, "shown; printed:", sorted(heads))


def test_shown_epsilons_are_read_from_comments_and_output_blocks():
    """The check above can fail: it reads the ε a page shows, and misses none."""
    code = "print(r.summary())  # ε = 7.667 (max over agents, rdp)\nx = 1  # σ for ε = 1\n"
    shown = "metric  mean\nε = 7.126 (max over agents, pld) at δ = 1e-05\n"
    assert _shown_epsilons(code, shown) == ["ε = 7.667", "ε = 7.126"]
    with pytest.raises(AssertionError):
        _assert_shown_epsilons_are_printed("p", code, "", "ε = 7.126 (max over agents, pld)\n")


@pytest.mark.slow
def test_the_channels_module_example_prints_the_epsilon_it_shows(tmp_path, monkeypatch):
    """The example that opens the channels API page runs as shown (run shrunk, report not), and
    its report is finite and the ε its comment shows (it showed neither: no problem was defined
    and the comment's 7.07 was stale)."""
    import contextlib
    import inspect
    import io
    import re

    import jax

    from jaxdp import channels

    doc = inspect.cleandoc(channels.__doc__)
    example = re.search(r"Example::\n\n(.*?)\n\n(?=\S)", doc, re.S)[1]
    code = inspect.cleandoc("\n".join(line for line in example.splitlines()))
    monkeypatch.chdir(tmp_path)
    with jax.enable_x64(False), contextlib.redirect_stdout(io.StringIO()) as out:
        namespace = {}
        exec(compile(_shrunk(code), "jaxdp.channels", "exec"), namespace)  # noqa: S102
    assert np.isfinite(namespace["report"].epsilon_max)
    assert _shown_epsilons(code, "")
    _assert_shown_epsilons_are_printed("jaxdp.channels", code, "", out.getvalue())


def test_a_catalogue_page_whose_default_report_is_inf_says_what_to_change(pages, catalogue):
    """Every inf on the site says why (the report's reason) and what to change: under a default
    report with no meaningful ε the page names the command that prints the noise reaching ε = 1,
    4 and 8 (or the Params to raise); a finite default report gets no such line."""
    shown = {name: text for name, text in pages.items() if "## Privacy" in text}
    inf = [name for name, text in shown.items() if "ε = inf (max over agents" in text]
    assert inf, "no default report is inf: the check below checks nothing"
    for name in inf:
        assert "No meaningful ε at the default Params" in pages[name], name
        cls = REGISTRY[name]
        assert (f"`jaxdp info {name}`" in pages[name]) == (cls.noise_field is not None), name
    finite = [name for name, text in shown.items() if name not in inf]
    assert finite and not any("No meaningful ε" in shown[name] for name in finite)
