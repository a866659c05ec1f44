"""The algorithm catalogue, generated from :data:`jaxdp.algorithms.REGISTRY` at build time.

:func:`entries` reads each registered class (docstring, Params fields with their defaults and
declared metadata, privacy report on a tiny problem, reference test) into an :class:`Entry`;
:func:`write_catalogue` writes ``catalogue/<name>.md`` and ``catalogue/index.md`` under the docs
source folder. As a Sphinx extension (``setup``) it does so on ``builder-inited``. Nothing here is
hand-maintained: a new algorithm in the registry gets its page on the next build.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import re
import warnings
from pathlib import Path

from jaxdp._text import plain_scripts

ROOT = Path(__file__).resolve().parents[2]

FAMILIES = {
    # family (module prefix) -> (bibliography anchor, short citation, what the family is)
    "catalogue": ("", "", "peer-to-peer catalogue"),
    "dpp2": ("bib-dpp2", "Ou, Wang, Liu & Lu 2025 (DPP²)", "paper 000"),
    "ldp": ("bib-ldp", "Xiao, Ye & Devadas 2019 (LDP)", "paper 001"),
    "dpadmm": ("bib-dpadmm", "Huang, Hu, Chan-Tin & Gong 2018 (DP-ADMM)", "paper 002"),
    "recal": ("bib-recal", "Wang, Guo, Yang & Shi 2024 (DP-RECAL)", "paper 003"),
    "ltadmm": ("bib-ltadmm", "Ren, Ma, Bastianello, Johansson, Parisini & Malikopoulos 2026 "
                             "(LT-ADMM-DP)", "paper 004"),
    "federated": ("", "", "federated baselines"),
}
ORIGINALS = {
    # class -> (bibliography anchor, short citation) of the method a class implements, where it is
    # not the family's paper (the baselines); the class docstring names the same work
    "DGD": ("bib-nedic-ozdaglar", "Nedić & Ozdaglar 2009"),
    "EXTRA": ("bib-extra", "Shi et al. 2015"),
    "NIDS": ("bib-nids", "Li, Shi & Yan 2019"),
    "DIGing": ("bib-diging", "Nedić, Olshevsky & Shi 2017"),
    "ADMM": ("bib-bastianello", "Bastianello et al. 2021"),
    "DiaDSP": ("bib-ding", "Ding et al. 2022"),
    "PPDC": ("bib-xie", "Xie et al. 2025"),
    "YiPrimalDual": ("bib-yi", "Yi et al. 2022"),
    "DPNIDS": ("bib-nids", "Li, Shi & Yan 2019"),
    "DPEXTRA": ("bib-pg-extra", "Shi, Ling, Wu & Yin 2015"),
    "DPICADMM": ("bib-chang", "Chang, Hong & Wang 2015"),
    "LTADMMVR": ("bib-ren-ltadmm-vr", "Ren, Bastianello, Johansson & Parisini 2026"),
    "DPMRADMM": ("bib-zhang-khalili-liu", "Zhang, Khalili & Liu 2019"),
    "PORTER": ("bib-li-chi", "Li & Chi 2025"),
    "PriSMA": ("bib-huang-zhang-ling", "Huang, Zhang & Ling 2025"),
    "FedAvg": ("bib-fedavg", "McMahan et al. 2017"),
    "FedProx": ("bib-fedprox", "Li et al. 2020"),
    "Scaffold": ("bib-scaffold", "Karimireddy et al. 2020"),
    "FedNova": ("bib-fednova", "Wang et al. 2020"),
    "FedDyn": ("bib-feddyn", "Acar et al. 2021"),
    "FedPD": ("bib-fedpd", "Zhang et al. 2021"),
    "FedLT": ("bib-fedlt", "Bastianello, Liu & Johansson 2024"),
    "FedAdam": ("bib-fedopt", "Reddi et al. 2021"),
    "FedYogi": ("bib-fedopt", "Reddi et al. 2021"),
    "FedAdagrad": ("bib-fedopt", "Reddi et al. 2021"),
    "DPFedAvg": ("bib-dp-fedavg", "McMahan et al. 2018"),
    "LDPFedAvg": ("bib-fedavg", "McMahan et al. 2017"),
}
_LITERAL = re.compile(r"(``.+?``)")
_BARS = re.compile(r"(?<![\\|])\|(?=[^|\s])([^|\n]*?[^|\s\\])\|(?![|_])")


def escape_bars(text: str) -> str:
    """Escape ``|x|`` (outside inline literals) so that reST reads no substitution in it."""
    parts = _LITERAL.split(text)
    return "".join(p if i % 2 else _BARS.sub(r"\\|\1\\|", p) for i, p in enumerate(parts))


def docstring_text(text: str) -> str:
    """A docstring as the site shows it: bars escaped (:func:`escape_bars`), TeX-style scripts
    in Unicode (:func:`jaxdp._text.plain_scripts`)."""
    return escape_bars(plain_scripts(text))


def rst_docstring(cls: type) -> str:
    """The class docstring as autodoc shows it: Google sections through napoleon, bars escaped."""
    doc = inspect.getdoc(cls) or ""
    try:
        from sphinx.ext.napoleon import Config, GoogleDocstring
    except ImportError:  # the tests run without the docs extra
        return docstring_text(doc)
    # Attributes as a field list like Parameters: napoleon's ``:ivar:`` fields render as literal
    # "ivar name:" labels outside a class directive (the catalogue pastes the docstring bare).
    config = Config(napoleon_use_ivar=True, napoleon_custom_sections=[
        ("Attributes", "params_style"), ("Class attributes", "params_style"),
        ("Static configuration", "params_style")])
    return docstring_text(str(GoogleDocstring(doc, config)))


@dataclasses.dataclass(frozen=True)
class Field:
    """One Params field: name, default, and what its declaration (``jaxdp.param``) says: meaning,
    domain, shape (scalar or per agent) and unit."""

    name: str
    default: str
    meaning: str
    domain: str = "any real"
    shape: str = "scalar or (N,)"
    unit: str = ""


@dataclasses.dataclass(frozen=True)
class Entry:
    """Everything the catalogue page of one registered algorithm shows."""

    name: str
    cls: type
    family: str
    doc: str
    fields: tuple[Field, ...]
    status: str
    private: bool | None
    privacy: dict
    reference: tuple[str, ...]
    test_stem: str  # tests/algorithms/test_<stem>.py and tests/reference/<stem>.py


# -- reading the code --------------------------------------------------------------------------
def family_of(cls: type) -> str:
    """``jaxdp.algorithms.recal.baselines`` -> ``"recal"``; catalogue modules -> ``"catalogue"``."""
    return cls.__module__.split(".")[2]


def params_fields(params_type: type) -> tuple[Field, ...]:
    """The Params fields with default and their declared metadata (:func:`jaxdp.param`)."""
    from jaxdp.algorithms import param_specs

    if not dataclasses.is_dataclass(params_type):
        return ()
    specs = param_specs(params_type)
    out = []
    for f in dataclasses.fields(params_type):
        if f.default is not dataclasses.MISSING:
            default = repr(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = repr(f.default_factory())
        else:
            default = "(required)"
        spec = specs[f.name]
        out.append(Field(f.name, default, spec.doc, spec.domain.text, spec.shape_text,
                         spec.unit or ""))
    return tuple(out)


STATUS = {
    "reconstruction": "reconstruction (see the docstring below)",
    "baseline": "baseline of a paper's comparison; parts are reconstructed (see its module)",
    "standard": "a standard method, as in the work it cites",
    "paper": "the paper's algorithm, as published",
    None: "not declared (the class sets no provenance)",
}
"""The page's status line for each declared ``Algorithm.provenance``."""


def status_of(cls: type) -> str:
    """The status the class declares (its ``provenance``)."""
    return STATUS[cls.provenance]


def tiny_runs():
    """Small (problem, network) pairs to ask ``privacy()`` on, tried in order."""
    from jaxdp import network, problems

    yield problems.least_squares(n_agents=4, m=8, d=3, seed=0, reference=False), \
        network.make_network("ring", 4)
    yield problems.logistic(n_agents=4, m=8, d=3, seed=0, reference=False), \
        network.make_network("ring", 4)
    yield problems.least_squares(n_agents=4, m=8, d=3, seed=0, reference=False), \
        network.make_network("complete", 4)


SETTING = "4 agents, 10 steps, default Params, δ = 1e-5"


def privacy_of(alg) -> tuple[bool | None, dict]:
    """Whether ``alg.privacy`` returns a report on a tiny problem, and that report's headline."""
    errors = []
    for problem, net in tiny_runs():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = alg.privacy(problem, net, alg.default_params(), steps=10, delta=1e-5)
        except Exception as e:  # noqa: BLE001 -- shown on the page, never hidden
            errors.append(f"{type(e).__name__}: {e}")
            continue
        if report is None:
            return False, {}
        return True, {"relation": f"{report.relation} ({report.relation_text})",
                      "unit": report.unit,
                      "headline": report.headline or "none (ε = inf)",
                      "sound": ", ".join(report.sound),
                      "methods": ", ".join(report.methods),
                      "summary": report.summary(),
                      "epsilon": float(report.epsilon_max),
                      "setting": SETTING}
    return None, {"error": errors[-1] if errors else "no tiny problem fits"}


def remedy_pointer(cls, privacy: dict) -> list[str]:
    """Under a default report with no meaningful ε (inf, or above the command line's
    ``MEANINGFUL_EPSILON``), the lines that say what to change: the command that prints the noise
    reaching ε = 1, 4 and 8 (``jaxdp info`` computes it; the page does not, to keep the build
    short), or, without a noise field, which Params to raise."""
    from jaxdp.cli._common import _needs_remedy

    if not _needs_remedy(privacy.get("epsilon")):
        return []
    field = cls.noise_field
    change = (f"`jaxdp run {cls.name} --epsilon E` calibrates `{field}` to a target ε, and "
              f"`jaxdp info {cls.name}` prints the `{field}` that reaches ε = 1, 4 and 8 when its "
              f"own default report (10 agents, 100 steps) has no meaningful ε either" if field else
              "it declares no noise field `--epsilon` could calibrate: raise its noise Params "
              "(above) or run fewer steps")
    return ["", f"No meaningful ε at the default Params on this tiny setting: {change}."]


TEST_STEMS = {"catalogue": ("baselines", "catalogue")}
"""A family's test/reference file stems where they differ from the family's name."""


def reference_functions(entry_names: dict[str, str], stem: str) -> dict[str, set[str]]:
    """``{registry name: {reference function}}`` read from ``tests/algorithms/test_<stem>.py``.

    A call or tuple of the test file that names exactly one algorithm (its registry string or its
    class) and some ``ref.<function>`` links the two.
    """
    path = ROOT / "tests" / "algorithms" / f"test_{stem}.py"
    found: dict[str, set[str]] = {}
    if not path.exists():
        return found
    by_class = {cls: name for name, cls in entry_names.items()}
    tree = ast.parse(path.read_text())
    helpers = {f.name: {s.attr for s in ast.walk(f) if isinstance(s, ast.Attribute)
                        and isinstance(s.value, ast.Name) and s.value.id == "ref"}
               for f in tree.body if isinstance(f, ast.FunctionDef)}  # e.g. ``_lt_ref(3)``
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Call, ast.Tuple)):
            continue
        algs, refs = set(), set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in helpers:
                refs.update(helpers[sub.id])
            elif isinstance(sub, ast.Constant) and sub.value in entry_names:
                algs.add(sub.value)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                if sub.value.id == "ref":
                    refs.add(sub.attr)
                elif sub.attr in by_class:
                    algs.add(by_class[sub.attr])
        if len(algs) == 1 and refs:
            found.setdefault(algs.pop(), set()).update(refs)
    return found


@functools.cache
def entries() -> tuple[Entry, ...]:
    """One :class:`Entry` per registered algorithm, in registry order (computed once)."""
    from jaxdp.algorithms import REGISTRY

    names = {name: cls.__name__ for name, cls in REGISTRY.items()}
    refs, stems = {}, {}
    for family in {family_of(c) for c in REGISTRY.values()}:
        for stem in TEST_STEMS.get(family, (family,)):
            for name, fns in reference_functions(names, stem).items():
                refs.setdefault(name, set()).update(fns)
                stems[name] = stem
    out = []
    for name, cls in REGISTRY.items():
        private, report = privacy_of(cls())
        out.append(Entry(name=name, cls=cls, family=family_of(cls),
                         doc=rst_docstring(cls), fields=params_fields(cls.params_type),
                         status=status_of(cls), private=private, privacy=report,
                         reference=tuple(sorted(refs.get(name, ()))),
                         test_stem=stems.get(name, TEST_STEMS.get(family_of(cls),
                                                                  (family_of(cls),))[0])))
    return tuple(out)


# -- writing the pages -------------------------------------------------------------------------
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def citation(entry: Entry) -> str:
    """The family's paper as a link to its bibliography entry."""
    anchor, short, what = FAMILIES.get(entry.family, ("", "", entry.family))
    parts = []
    if entry.cls.__name__ in ORIGINALS:
        original, name = ORIGINALS[entry.cls.__name__]
        parts.append(f"the method of [{name}](../bibliography.md#{original})")
    if anchor:
        role = "compared in" if entry.cls.__module__.endswith("baselines") else "as in"
        parts.append(f"{role} [{short}](../bibliography.md#{anchor}) ({what})")
    return "; ".join(parts) or ("the work its `cites` names (see the "
                                "[bibliography](../bibliography.md))")


def page(entry: Entry) -> str:
    """The markdown (MyST) page of one algorithm."""
    cls = entry.cls
    lines = [f"({entry.name})=", f"# `{entry.name}` — {cls.__name__}", "",
             f"**Citation:** {citation(entry)}  ",
             f"**Cites:** {plain_scripts('; '.join(cls.cites)) or '(none declared)'}  ",
             f"**Class:** {{class}}`{cls.__module__}.{cls.__name__}` · "
             f"**Params:** {{class}}`{cls.params_type.__module__}.{cls.params_type.__name__}`  ",
             f"**Status:** {entry.status}  "]
    if entry.private is True:
        lines.append("**Private:** yes — `privacy()` returns a report")
    elif entry.private is False:
        lines.append("**Private:** no — `privacy()` returns `None`")
    else:
        lines.append(f"**Private:** not determined on a tiny problem "
                     f"(`{_cell(entry.privacy.get('error', ''))}`)")
    lines += ["", "## Equations and notes", "", "```{eval-rst}", entry.doc, "```", "",
              "## Params", ""]
    if entry.fields:
        lines += ["| field | default | meaning | domain | shape | unit |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| `{f.name}` | `{_cell(f.default)}` | {_cell(plain_scripts(f.meaning))} | {f.domain} | "
                  f"{f.shape} | {_cell(f.unit)} |" for f in entry.fields]
        lines += ["", "Checked before a run: every field finite, in its domain, and of its shape "
                  "(declared with `jaxdp.param`)."]
    else:
        lines.append("No Params.")
    if cls.noise_field:
        lines += ["", f"Calibrated to a target ε through `{cls.noise_field}`."]
    if entry.private:
        p = entry.privacy
        lines += ["", "## Privacy", "",
                  f"Default report ({p['setting']}):", "",
                  f"- **relation:** `{p['relation']}`; privacy unit: {p['unit']}",
                  f"- **headline accountant:** `{p['headline']}` (sound curves: {p['sound']})",
                  f"- **curves:** {p['methods']}", "", "```text", p["summary"], "```"]
        lines += remedy_pointer(cls, p)
    lines += ["", "## Reference test", ""]
    if entry.reference:
        lines.append(f"Checked step by step against the per-node reference "
                     f"`tests/reference/{entry.test_stem}.py`: "
                     + ", ".join(f"`{fn}`" for fn in entry.reference)
                     + f" (in `tests/algorithms/test_{entry.test_stem}.py`).")
    else:
        lines.append(f"No per-node reference function is linked to it in "
                     f"`tests/algorithms/test_{entry.test_stem}.py`.")
    return "\n".join(lines) + "\n"


def short_status(status: str) -> str:
    """The status in a few words, for the index table."""
    for start, short in (("reconstruction", "reconstruction"),
                         ("baseline", "baseline, partly reconstructed"),
                         ("a standard method", "standard method"),
                         ("not declared", "not declared")):
        if status.startswith(start):
            return short
    return "paper's algorithm"


def index(all_entries: tuple[Entry, ...]) -> str:
    """The catalogue's index page: one row per algorithm, and the toctree."""
    rows = ["| name | class | family | private | status |", "|---|---|---|---|---|"]
    for e in all_entries:
        private = {True: "yes", False: "no", None: "?"}[e.private]
        rows.append(f"| [`{e.name}`]({e.name}.md) | `{e.cls.__name__}` | "
                    f"{FAMILIES.get(e.family, ('', '', e.family))[2]} | {private} | "
                    f"{short_status(e.status)} |")
    toc = ["```{toctree}", ":hidden:", ""] + [e.name for e in all_entries] + ["```"]
    return "\n".join(["# Algorithm catalogue", "",
                      f"{len(all_entries)} algorithms, generated from "
                      "`jaxdp.algorithms.REGISTRY` when the site is built. Each page gives the "
                      "citation, the equations (the class docstring), the Params with default, "
                      "meaning, domain and shape (their `jaxdp.param` declarations), whether "
                      "`privacy()` returns a report and that report's relation and headline "
                      "accountant, whether it is the paper's algorithm or a reconstruction, and "
                      "the per-node reference test.", ""]
                     + rows + [""] + toc) + "\n"


def write_catalogue(srcdir: Path) -> list[Path]:
    """Write ``catalogue/index.md`` and a page per algorithm under ``srcdir``; return the paths."""
    out = Path(srcdir) / "catalogue"
    out.mkdir(exist_ok=True)
    all_entries = entries()
    written = {out / "index.md": index(all_entries)}
    written.update({out / f"{e.name}.md": page(e) for e in all_entries})
    for path, text in written.items():
        if not path.exists() or path.read_text() != text:  # unchanged pages stay cached
            path.write_text(text)
    for stale in set(out.glob("*.md")) - set(written):
        stale.unlink()
    return list(written)


def _on_builder_inited(app) -> None:
    write_catalogue(Path(app.srcdir))


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
