"""The Vega JavaScript a release draws its charts with: Vega, Vega-Lite and Vega-Embed as one classic
script (``vega.js``), made from the copy the installed Streamlit ships for its own charts.

Streamlit serves them as ES-module chunks (``streamlit/static/static/js``: ``embed.*.js`` and the
chunks it imports, and ``vega-interpreter.*.js``). Module scripts do not load from ``file://``, so
:func:`vega_bundle` links the chunks into one classic script: each chunk becomes a function whose
imports are read from the chunks before it (dependencies first; the chunks form no cycle) and whose
exports are getters (live, as module bindings are). The script sets ``window.vegaEmbed(el, spec,
options)``, which draws with Vega's expression interpreter (no ``eval``: the page's Content Security
Policy forbids it). Nothing is fetched, at build time or when the page opens. Licences: Vega,
Vega-Lite and Vega-Embed BSD-3-Clause; Streamlit Apache-2.0.
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from core.base.errors import WorkbenchError

_IMPORT = re.compile(r'import\{([^}]*)\}from"\./([^"]+)";?')
_EXPORT = re.compile(r"export\{([^}]*)\};?\s*$")
_LOADER = re.compile(r"import\(`\./((?:embed|vega-interpreter)\.[\w-]+\.js)`\)")
_NAME = re.compile(r"^[\w$]+$")
# the chunks' exports by file: a name no minified chunk declares (a chunk's own names would shadow it)
_REGISTRY = "__workbench_vega_chunks__"


def chunks_dir() -> Path:
    """Where the installed Streamlit keeps its JavaScript chunks (found, not imported: only its files are read)."""
    spec = importlib.util.find_spec("streamlit")
    if spec is None or spec.origin is None:
        raise WorkbenchError("`release` draws its charts with the Vega JavaScript Streamlit ships: install streamlit")
    return Path(spec.origin).resolve().parent / "static" / "static" / "js"


def _entries(folder: Path) -> tuple[str, str]:
    """The file names of the embed chunk and of the expression interpreter chunk (from Streamlit's loader)."""
    loaders = sorted(folder.glob("loadVegaEmbed.*.js"))
    found = {m.group(1).split(".")[0]: m.group(1) for p in loaders for m in _LOADER.finditer(p.read_text("utf-8"))}
    if set(found) != {"embed", "vega-interpreter"}:
        raise WorkbenchError(f"no Vega-Embed chunks found in {folder} (Streamlit's loadVegaEmbed.*.js): "
                             "this Streamlit version is not supported by `release`")
    return found["embed"], found["vega-interpreter"]


def _pairs(spec: str, *, where: str) -> list[tuple[str, str]]:
    """``a as b,c`` → ``[(a, b), (c, c)]`` (an import's or export's list of names)."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, alias = part.partition(" as ")
        name, alias = name.strip(), (alias or name).strip()
        if not (_NAME.match(name) and _NAME.match(alias)):
            raise WorkbenchError(f"{where}: cannot link the names {part!r}")
        out.append((name, alias))
    return out


def _split(name: str, source: str) -> tuple[list[tuple[str, list[tuple[str, str]]]], str, list[tuple[str, str]]]:
    """A chunk's leading imports ``[(file, [(exported, local)])]``, its body and its exports ``[(local, exported)]``."""
    imports, pos = [], 0
    while m := _IMPORT.match(source, pos):
        imports.append((m.group(2), _pairs(m.group(1), where=name)))
        pos = m.end()
    end = _EXPORT.search(source)
    body = source[pos:end.start() if end else len(source)]
    if re.search(r"\bimport\s*\(|import\.meta|\bexport\s*\{|(?:^|[;}])import[{*\"]", body):
        raise WorkbenchError(f"{name}: a module form the Vega bundler does not link (dynamic import, import.meta or "
                             "an import or export inside the chunk)")
    return imports, body, _pairs(end.group(1), where=name) if end else []


def _order(folder: Path, roots: tuple[str, ...]) -> list[tuple[str, str]]:
    """``[(file, source)]`` of ``roots`` and every chunk they import, dependencies first."""
    done: dict[str, str] = {}
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in done:
            return
        if name in visiting:
            raise WorkbenchError(f"{folder}: the Vega chunks import each other in a cycle at {name}")
        visiting.add(name)
        source = (folder / name).read_text("utf-8")
        for dep, _names in _split(name, source)[0]:
            visit(dep)
        visiting.discard(name)
        done[name] = source

    for root in roots:
        visit(root)
    return list(done.items())


def _module(name: str, source: str) -> str:
    imports, body, exports = _split(name, source)
    if _REGISTRY in body:
        raise WorkbenchError(f"{name}: uses the name {_REGISTRY}, which the Vega bundler links chunks with")
    reads = "".join(f"const{{{','.join(f'{a}:{b}' for a, b in names)}}}={_REGISTRY}[{dep!r}];" for dep, names in imports if names)
    getters = ",".join(f"get {exported}(){{return {local}}}" for local, exported in exports)
    return f"{_REGISTRY}[{name!r}]=(function(){{\"use strict\";{reads}\n{body}\nreturn{{{getters}}};}})();\n"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=1)
def vega_bundle() -> bytes:
    """``vega.js``: Vega, Vega-Lite and Vega-Embed as one classic script setting ``window.vegaEmbed``."""
    folder = chunks_dir()
    embed, interpreter = _entries(folder)
    parts = [_module(name, source) for name, source in _order(folder, (embed, interpreter))]
    header = (f"/* Vega, Vega-Lite and Vega-Embed (BSD-3-Clause, https://vega.github.io) as Streamlit "
              f"{_version('streamlit')} ships them (Apache-2.0), linked into one classic script by Scale Workbench "
              f"(chunks {embed}, {interpreter}). */\n")
    tail = (f"var E={_REGISTRY}[{embed!r}],I={_REGISTRY}[{interpreter!r}];"
            "window.vegaEmbed=function(el,spec,opts){return E.t(el,spec,Object.assign({ast:true,"
            "expr:I.n.expressionInterpreter},opts||{}));};window.vegaEmbed.version=E.n.version;\n")
    return (header + f"(function(){{var {_REGISTRY}={{}};\n" + "".join(parts) + tail + "})();\n").encode("utf-8")
