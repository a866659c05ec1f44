"""The documentation site reads as a page a person reads: checks on the Markdown sources.

No Sphinx build here (cheap): the sources under ``docs/`` are parsed. The built HTML is checked
only by ``test_the_built_site_has_no_raw_markup`` (slow: ``--runslow``).
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATED = ("_build", "catalogue", "jupyter_execute")  # written by the build, not sources
WIDTH = 88
"""The widest line of a code block that the site's content column shows without scrolling."""
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                   re.S | re.M)


def _sources():
    """Every Markdown source of the site (the generated pages excluded)."""
    return sorted(p for p in DOCS.rglob("*.md")
                  if not set(p.relative_to(DOCS).parts) & set(GENERATED))


def _included(page):
    """The files a page includes (``{include}`` directives), as paths."""
    return [(page.parent / name).resolve()
            for name in re.findall(r"^```\{include\} (\S+)", page.read_text(), re.M)
            if (page.parent / name).exists()]


def _blocks(text):
    """``(info, body)`` of each fenced block: ``info`` the language or ``{directive}``."""
    return [(m["info"].strip(), m["body"]) for m in FENCE.finditer(text)]


def _prose(text):
    """``text`` without its code and math: fenced blocks, ``$$...$$``, ``$...$``, inline code."""
    text = FENCE.sub("", text)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    text = re.sub(r"``.+?``|`[^`]+`", "", text, flags=re.S)  # inline code, {math}`...` roles
    return re.sub(r"\$[^$\n]+\$", "", text)


def _cli_reference():
    from jaxdp.cli import reference_markdown

    return reference_markdown()


def test_no_internal_issue_numbers_on_the_site():
    """Page titles and text name what changed, not the tracker's internal issue numbers."""
    pattern = re.compile(r"\bissues? \d+|\bthe issue's\b|-issue-\d+", re.I)
    pages = {p for page in _sources() for p in (page, *_included(page))}
    pages.add(DOCS / "_ext" / "catalogue.py")  # writes the catalogue pages' text
    assert ROOT / "benchmarks" / "README.md" in pages  # included by benchmarks.md
    found = [(p.name, line) for p in sorted(pages) for line in p.read_text().splitlines()
             if pattern.search(line)]
    assert not found, found


def test_no_raw_subscript_or_superscript_markup_outside_math():
    """``ε_{u→v}`` outside ``$...$`` renders as typed: every ``_{``/``^{`` is math or code."""
    assert "dollarmath" in (DOCS / "conf.py").read_text()
    pages = {p for page in _sources() for p in (page, *_included(page))}
    found = [(p.name, line) for p in sorted(pages) for line in _prose(p.read_text()).splitlines()
             if "_{" in line or "^{" in line]
    assert not found, found


def test_prose_stripping_keeps_what_is_outside_math_and_code():
    """The check above can fail: raw markup in text is kept, math and code are removed."""
    assert "_{" in _prose("the pairwise ε_{u→v} of Muffliato")
    assert "_{" not in _prose("the pairwise $ε_{u→v}$ and `x_{k}` and ``y^{2}``")
    assert "_{" not in _prose("$$\nε_{u→v}\n$$\n```python\nx_{1} = 0\n```\n")
    assert "_{" not in _prose("a span `Σ_{s≤k} δ_s\nover two lines` ends")


def test_every_code_line_fits_the_content_column():
    """Every line of a fenced code block on a page (and of the generated command-line reference)
    is at most 88 characters: a longer line's end was hidden behind a scroll bar. Program output
    (``text`` blocks) is printed as the program wrote it; the stylesheet wraps it instead."""
    long = [(p.name, info, line) for p in _sources() for info, body in _blocks(p.read_text())
            if not info.startswith("{") or info.startswith(("{code", "{literal"))
            if info != "text" for line in body.splitlines() if len(line) > WIDTH]
    long += [("cli reference", "text", line) for _, body in _blocks(_cli_reference())
             for line in body.splitlines() if len(line) > WIDTH]
    assert not long, long


def test_the_stylesheet_shows_every_block_whole():
    """Code and output blocks wrap at the column's edge instead of hiding their end (furo's
    ``pre { overflow: auto }`` hides it behind a scroll bar that appears only on scrolling)."""
    css = re.sub(r"/\*.*?\*/", "", (DOCS / "_static" / "jaxdp.css").read_text(), flags=re.S)
    rules = re.findall(r"([^{}]*)\{([^{}]*)\}", css)
    wrapped = {sel.strip() for sels, body in rules if re.search(r"white-space:\s*pre-wrap", body)
               for sel in sels.split(",")}
    assert {"div.highlight pre", "div.highlight-text pre"} <= wrapped, wrapped


def test_the_landing_page_says_what_jaxdp_covers():
    text = (DOCS / "index.md").read_text()
    assert not re.search(r"\b(five|four|six) papers\b", text)
    for topic in ("federated", "threat model", "audit", "model", "tun", "catalogue"):
        assert topic in text.lower(), topic
    assert "\nfederated\n" in text  # the federated page is in the toctree


def _sections(text):
    """``{heading: body}`` of a page's ``##`` sections."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_the_command_line_page_shows_an_example_with_output_per_command():
    """docs/cli.md: for each command, what it is for, one runnable example (a ``bash`` block
    starting ``jaxdp NAME``) and the output it printed (a ``text`` block); the full ``--help``
    reference is included under it, one literal block per command."""
    from jaxdp.cli import _parser

    page = DOCS / "cli.md"
    assert page.exists(), "docs/cli.md, the command-line guide, is a source page"
    sections = _sections(page.read_text())
    sub = _parser()._subparsers._group_actions[0]  # noqa: SLF001
    for name in sub.choices:
        body = sections.get(f"jaxdp {name}", "")
        blocks = _blocks(body)
        commands = [b for info, b in blocks if info == "bash"]
        assert any(b.lstrip().startswith(f"jaxdp {name}") for b in commands), name
        assert any(info == "text" and b.strip() for info, b in blocks), (name, "no output")
        assert body.split("```")[0].strip(), (name, "no text saying what it is for")
    assert "```{include} cli_reference.md" in page.read_text()
    reference = _cli_reference()
    assert reference.count("```text\nusage: jaxdp ") == len(sub.choices) + 1


def test_the_command_line_pages_figures_exist():
    """Every image the command-line page shows is committed, and small."""
    text = (DOCS / "cli.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images, "no figure on the command-line page"
    for image in images:
        path = DOCS / image
        assert path.exists() and path.stat().st_size < 150_000, image


def test_the_federated_page_covers_the_family_and_is_in_the_toctree():
    page = DOCS / "federated.md"
    assert page.exists()
    text = page.read_text()
    for name in ("FedAvg", "FedProx", "SCAFFOLD", "FedNova", "FedDyn", "FedAdam", "DP-FedAvg",
                 "LDP-FedAvg", "trusted_server", "selection", "poisson"):
        assert name in text, name
    blocks = _blocks(text)
    assert any(info == "bash" and b.lstrip().startswith("jaxdp compare") for info, b in blocks)
    assert any(info == "text" for info, _ in blocks), "the compare command's output"
    assert any(info == "python" and "DPFedAvg" in b and "privacy(" in b for info, b in blocks)
    assert "\nfederated\n" in (DOCS / "index.md").read_text()


@pytest.mark.slow
def test_the_built_site_has_no_raw_markup(tmp_path):
    """Build the site (about 150 s) and read every page's HTML: no raw ``_{``/``^{`` in text, no
    internal issue numbers, no unresolved MyST reference."""
    import html
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(DOCS),
                    str(tmp_path)], check=True, cwd=ROOT)
    for page in tmp_path.rglob("*.html"):
        if "_modules" in page.parts or page.name in ("genindex.html", "search.html"):
            continue
        raw = page.read_text()
        body = re.sub(r"<(pre|script|style|math)\b.*?</\1>", "", raw, flags=re.S)
        body = re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]", "", body, flags=re.S)  # MathJax
        text = html.unescape(re.sub(r"<code\b.*?</code>|<[^>]+>", "", body, flags=re.S))
        assert "_{" not in text and "^{" not in text, page.name
        assert not re.search(r"\bissue \d+", text), page.name
        assert "{ref}" not in text and "{doc}" not in text, page.name


def test_docstring_scripts_are_written_as_text():
    """The catalogue and the API pages show docstrings as prose: ``x_i^{k+1}`` in Unicode (or
    ``^(…)`` where a character has no such form), literals and math as written."""
    import sys

    from jaxdp._text import plain_scripts

    assert plain_scripts("x_i^{k+1}, β_{k+1}, r^{K−1}") == "x_iᵏ⁺¹, βₖ₊₁, rᴷ⁻¹"
    assert plain_scripts("Σ_{h∈B} prox_{αr}") == "Σ_(h∈B) prox_(αr)"
    kept = "``x^{k+1}`` and :math:`y_{i,j}` and $z^{2}$"
    assert plain_scripts(kept) == kept
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from catalogue import docstring_text, rst_docstring
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    from jaxdp import algorithms

    assert docstring_text("|N_i| and x^{k+1}") == "\\|N_i\\| and xᵏ⁺¹"
    assert "^{" in algorithms.EXTRA.__doc__  # the catalogue page of extra showed it raw
    shown = re.sub(r"``.+?``|:math:`[^`]*`", "", rst_docstring(algorithms.EXTRA), flags=re.S)
    assert "^{" not in shown and "_{" not in shown, shown


def test_getting_started_shows_each_commands_output_as_an_output_block():
    """Every example of the first page a newcomer reads (the demo command, the first run) is
    followed by the output it printed, in a ``text`` block: output in the prose was missed."""
    blocks = _blocks((DOCS / "getting_started.md").read_text())
    examples = [i for i, (info, body) in enumerate(blocks)
                if info == "python" or (info == "bash" and body.lstrip().startswith("jaxdp "))]
    assert len(examples) >= 2, examples
    for i in examples:
        assert i + 1 < len(blocks) and blocks[i + 1][0] == "text" and blocks[i + 1][1].strip(), \
            blocks[i][1]


MAX_COLUMNS = 11
"""The most columns a table may have: measured in Chromium (1400 px window, furo's 742 px content
column, the stylesheet's small type for wide tables), every table of 11 columns on the benchmarks
page fits and the one of 13 hid its last three behind a horizontal scroll."""


def _table_widths(text):
    """The number of columns of each Markdown table of ``text`` (code blocks left out; ``\\|``
    inside a cell is not a column border)."""
    text = FENCE.sub("", text)
    heads = re.findall(r"^(\|.*\|)[ \t]*\n\|[-:| ]+\|[ \t]*$", text, re.M)
    return [len(re.split(r"(?<!\\)\|", head.strip())) - 2 for head in heads]


def test_every_table_fits_the_content_column():
    """A table wider than the content column scrolls sideways, its last columns unseen: no table
    on the site has more than ``MAX_COLUMNS`` columns (a wider one is split in two, as the scale
    benchmark's), and tables of six or more columns get the small type and the wrapping headings
    that the measurement above assumed."""
    assert _table_widths("| a | \\|E\\| | b |\n|---|---|---|\n| 1 | 2 | 3 |\n") == [3]
    pages = {p for page in _sources() for p in (page, *_included(page))}
    wide = [(p.name, n) for p in sorted(pages) for n in _table_widths(p.read_text())
            if n > MAX_COLUMNS]
    assert not wide, wide
    css = re.sub(r"/\*.*?\*/", "", (DOCS / "_static" / "jaxdp.css").read_text(), flags=re.S)
    assert re.search(r"table\.docutils:has\(tr > :nth-child\(6\)\)\s*\{[^}]*font-size", css)
    assert re.search(r"table\.docutils th\s*\{[^}]*overflow-wrap:\s*anywhere", css)


def _literal_lines(doc):
    """The lines of a cleaned docstring's code as the site shows it (a paragraph ending ``::``, a
    ``code-block``, a ``>>>`` doctest), each without its block's indentation; ``.. math::``
    blocks are formulas (MathJax), not code."""
    lines, out, i = doc.splitlines(), [], 0
    indent = lambda line: len(line) - len(line.lstrip())  # noqa: E731
    while i < len(lines):
        line, i = lines[i], i + 1
        if line.lstrip().startswith(">>>"):
            block = [line]
            while i < len(lines) and lines[i].strip() and indent(lines[i]) >= indent(line):
                block, i = [*block, lines[i]], i + 1
        elif (line.rstrip().endswith("::") or line.strip().startswith(".. code-block::")) \
                and not line.strip().startswith(".. math::"):
            block = []
            while i < len(lines) and (not lines[i].strip() or indent(lines[i]) > indent(line)):
                block, i = [*block, lines[i]], i + 1
            block = [b for b in block if b.strip() and not b.strip().startswith(":")]
        else:
            continue
        cut = min((indent(b) for b in block), default=0)
        out += [b[cut:] for b in block]
    return out


def _docstrings():
    """``(name, cleaned docstring)`` of every module of jaxdp and of its classes, functions and
    their methods: what the API and catalogue pages render."""
    import importlib
    import inspect
    import pkgutil

    import jaxdp

    seen = set()
    for info in pkgutil.walk_packages(jaxdp.__path__, "jaxdp."):
        module = importlib.import_module(info.name)
        objects = [(info.name, module)] + [
            (f"{info.name}.{n}", o) for n, o in vars(module).items()
            if (inspect.isclass(o) or inspect.isfunction(o)) and o.__module__ == info.name]
        objects += [(f"{name}.{n}", v) for name, o in objects if inspect.isclass(o)
                    for n, v in vars(o).items() if inspect.isfunction(v) or isinstance(v, property)]
        for name, o in objects:
            if o.__doc__ and id(o.__doc__) not in seen:
                seen.add(id(o.__doc__))
                yield name, inspect.cleandoc(o.__doc__)


def test_docstring_examples_fit_the_content_column():
    """A docstring's code (examples, printed formulas) is shown as a code block on the API and
    catalogue pages: at most 88 characters a line, as on the Markdown pages."""
    assert _literal_lines("Example::\n\n    x = 1\n\n.. math::\n\n    y\n\n>>> f(2)\n3\n") == [
        "x = 1", ">>> f(2)", "3"]
    assert _literal_lines(".. code-block:: text\n\n   a = b\n     c\n\nprose") == ["a = b", "  c"]
    long = [(name, line) for name, doc in _docstrings() for line in _literal_lines(doc)
            if len(line) > WIDTH]
    assert not long, long


def test_no_page_says_a_failed_privacy_check_only_warns():
    """A failed check of an assumption makes ε = inf with the reason (docs/privacy.md); a page
    that said it "raises a warning" (the concepts page did) promised less than the code does."""
    pattern = re.compile(r"check[^.]{0,40}\bfail[^.]{0,40}\bwarn", re.I)
    assert pattern.search("a check that fails raises a warning")
    pages = {p for page in _sources() for p in (page, *_included(page))} | {ROOT / "README.md"}
    found = [(p.name, m[0]) for p in sorted(pages)
             for m in pattern.finditer(re.sub(r"\s+", " ", _prose(p.read_text())))]
    assert not found, found


VOLATILE = re.compile(r"\d+(?:\.\d+)? s\b|\"\w+_seconds\": [0-9.]+")
"""What differs between two runs of one command: seconds of wall time."""


def _cli_example(page, section=None):
    """``(argv, grep pattern or None, shown output)`` of the first ``jaxdp`` example of ``page``
    (of its ``## section`` if given): a ``bash`` block, continuation lines joined, then the
    ``text`` block of its output."""
    import shlex

    text = (DOCS / page).read_text()
    blocks = _blocks(_sections(text)[section] if section else text)
    i = next(i for i, (info, b) in enumerate(blocks) if info == "bash" and b.startswith("jaxdp"))
    command, *grep = blocks[i][1].replace("\\\n", " ").strip().split("| grep -E")
    return (shlex.split(command)[1:], shlex.split(grep[0])[0] if grep else None,
            next(b for info, b in blocks[i + 1:] if info == "text"))


def _masked(text):
    """The lines of ``text`` with their seconds masked: ``VOLATILE`` and the cells of a table's
    ``run_seconds`` column (the demo's table of final metrics)."""
    lines, column = [], None
    for line in text.splitlines():
        cells = line.split(" | ")
        if "run_seconds" in cells:
            column = cells.index("run_seconds")
        elif column is not None and line.startswith("|") and len(cells) > column:
            cells[column] = "#"
        column = column if line.startswith("|") else None
        if line.strip():
            lines.append(VOLATILE.sub("#", " | ".join(cells)).rstrip())
    return lines


@pytest.mark.parametrize("page, section", [
    ("cli.md", "jaxdp list"), ("cli.md", "jaxdp info"),
    *(pytest.param("cli.md", f"jaxdp {n}", marks=pytest.mark.slow)
      for n in ("run", "compare", "tradeoff", "demo", "reproduce")),
    pytest.param("federated.md", None, marks=pytest.mark.slow)])
def test_the_command_line_page_shows_what_each_command_prints(page, section, tmp_path,
                                                              monkeypatch, capsys):
    """Each example's output block is what the command prints today, line for line (seconds
    masked): the page showed ε = 3.046 (rdp) for ``info dp_dgd`` after the headline became
    2.81 (pld)."""
    import jax

    from jaxdp.cli import main

    argv, grep, shown = _cli_example(page, section)
    monkeypatch.chdir(tmp_path)
    with jax.enable_x64(False):  # as the command runs (float32), whatever the suite's default
        main(argv)
    captured = capsys.readouterr()
    printed = (captured.out + captured.err).splitlines()
    if grep:
        printed = [line for line in printed if re.search(grep, line)]
    printed = set(_masked("\n".join(printed)))
    missing = [line for line in _masked(shown) if line not in printed]
    assert not missing, missing


def test_the_jaxdp_api_page_describes_the_lazy_import_once():
    """The ``jaxdp`` API page renders the package docstring (``automodule``), which explains the
    lazy import; the page's own prose said it again, in other words, under it."""
    import jaxdp

    shown = _prose((DOCS / "api" / "jaxdp.md").read_text()) + jaxdp.__doc__
    assert shown.count("PEP 562") == 1


def test_the_models_pages_examples_show_their_output():
    """The first examples of the models page (the MLP and the CNN on the packaged digits) are
    followed by the output they printed, as on the getting-started page."""
    blocks = _blocks((DOCS / "models.md").read_text())
    runs = [i for i, (info, body) in enumerate(blocks) if info == "python" and "jaxdp.run(" in body
            and "print(" in body]
    assert len(runs) >= 2, runs
    for i in runs:
        assert blocks[i + 1][0] == "text" and blocks[i + 1][1].strip(), blocks[i][1][:80]


def test_no_example_prints_more_after_the_summary_table():
    """``Trace.summary_table()`` ends with its warnings (seeds that diverged or ended worse than
    they started) on lines of their own; ``print(table, n, "diverged seeds")`` glued the count to
    the warning ("... too large a step 0 diverged seeds")."""
    pages = [ROOT / "README.md", *_sources()]
    found = [(p.name, line) for p in pages for info, body in _blocks(p.read_text())
             if info == "python" for line in body.splitlines()
             if re.search(r"print\([^#]*summary_table\(\)\s*,", line)]
    assert not found, found
