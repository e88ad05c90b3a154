"""The Vega linker: ES-module chunks (Streamlit's layout) become one classic script, dependencies
first, exports as live getters; a form it cannot link is refused, naming the chunk."""

from __future__ import annotations

import pytest

from core.base.errors import WorkbenchError
from core.release import vega_bundle as vb


def test_chunks_are_linked_dependencies_first_with_live_exports(tmp_path):
    folder = tmp_path / "js"
    folder.mkdir()
    (folder / "a.X1.js").write_text("let n=1;function bump(){n+=1}export{n as c,bump as d};")
    (folder / "b.X2.js").write_text('import{c as e,d as f}from"./a.X1.js";function g(){f();return e}export{g as t};')
    order = [name for name, _ in vb._order(folder, ("b.X2.js",))]
    assert order == ["a.X1.js", "b.X2.js"]
    body = vb._module("b.X2.js", (folder / "b.X2.js").read_text())
    assert body.startswith(f"{vb._REGISTRY}['b.X2.js']=(function(){{\"use strict\";const{{c:e,d:f}}={vb._REGISTRY}['a.X1.js'];")
    assert body.rstrip().endswith("return{get t(){return g}};})();")
    assert "import" not in body and "export" not in body


@pytest.mark.parametrize("text", ['const m=import("./x.js");export{m as t};', "const u=import.meta.url;export{u as t};",
                                  'var a=1;import{b}from"./y.js";export{a as t};'])
def test_a_form_it_cannot_link_is_refused_naming_the_chunk(tmp_path, text):
    with pytest.raises(WorkbenchError, match="odd.js"):
        vb._split("odd.js", text)


def test_the_installed_streamlit_ships_the_chunks_it_links():
    embed, interpreter = vb._entries(vb.chunks_dir())
    assert embed.startswith("embed.") and interpreter.startswith("vega-interpreter.")
