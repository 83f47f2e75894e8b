"""adfkit.widgets: pure renderers and the three browsers, driven by setting control values."""

from __future__ import annotations

import base64
import json
import re

import pandas as pd
import pytest
from adfbuild import build, result, row, text, use
from conftest import sample

import adfkit
from adfkit import widgets
from adfkit.widgets import AuditExplorer, LoopBrowser, ReplayPlayer

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
TOK = {"input": 100, "output": 10}
SUMMARY = "[Loop Compacted, audited] - Task: read a.md\n\n---\nYour loop was compacted. Continue."

# Epoch 0 (archived in audit row 1), then the live loop after one compaction.
ARCHIVED = [
    row(1, "user", text("A scheduled timer has fired.\nPayload: x")),
    row(2, "user", text("[Context: system_prompt] You are helpful.")),
    row(3, "assistant", [use("t1", "fs_read", {"path": "a.md"})], tokens=TOK),
    row(4, "user", [result("t1", "contents of a")]),
    row(5, "assistant", text("done"), tokens={"input": 120, "output": 5}),
]
LIVE = [
    row(6, "user", text(SUMMARY), tokens={"input": 300, "output": 50}, model="m"),
    row(7, "user", text("hello there")),
    row(8, "user", text("[Context: dynamic_instructions] [Inbox: 1 unread] read it")),
    row(
        9,
        "assistant",
        [use("t2", "msg_send", {"to": "bob"}), use("t3", "fs_read", {"path": "b.md"})],
        tokens={"input": 400, "output": 20},
    ),
    row(10, "user", [result("t2", "sent"), result("t3", "no such file", is_error=True)]),
    row(11, "assistant", text("ok"), tokens={"input": 450, "output": 3}),
]


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


@pytest.fixture
def agent(tmp_path):
    p = build(
        tmp_path / "a.adf",
        loop=LIVE,
        audit=[
            {"source": "loop", "rows": ARCHIVED},
            {"source": "inbox_message", "value": {"id": "m1", "payload": {"content": "hi there"}}},
            {
                "source": "file",
                "value": {"path": "old.md", "content_base64": _b64("old <b>text</b>"), "size": 15},
                "ref": "old.md",
            },
            {"source": "file", "data": b"not brotli at all", "ref": "bad.md"},
        ],
    )
    with adfkit.open_adf(p) as a:
        yield a


def _seqs(frame: pd.DataFrame) -> list[int]:
    return [int(s) for s in frame["seq"]]


def _html_seqs(html: str) -> list[int]:
    return [int(s) for s in re.findall(r'data-seq="(\d+)"', html)]


# -- LoopBrowser ---------------------------------------------------------------------------


def test_loop_browser_starts_on_the_live_loop(agent):
    b = LoopBrowser(agent)
    assert _seqs(b.page_frame) == [6, 7, 8, 9, 10, 11]
    assert _html_seqs(b.html.value) == [6, 7, 8, 9, 10, 11]
    assert b.status.value.startswith("rows 1-6 of 6")


def test_loop_browser_filters_by_kind_role_tool_and_text(agent):
    b = LoopBrowser(agent, history=True)
    assert b.n_matches == 11
    b.kind.value = "context"
    assert _html_seqs(b.html.value) == [2, 8]
    assert b.html.value.count("adf-row adf-context") == 2  # teal blocks
    b.kind.value = widgets.ALL
    b.role.value = "assistant"
    assert _html_seqs(b.html.value) == [3, 5, 9, 11]
    b.role.value = widgets.ALL
    assert b.tool.options == ((widgets.ALL, None), ("fs_read", "fs_read"), ("msg_send", "msg_send"))
    b.tool.value = "fs_read"  # the calls and the rows holding their results
    assert _html_seqs(b.html.value) == [3, 4, 9, 10]
    b.tool.value = "msg_send"
    assert _html_seqs(b.html.value) == [9, 10]
    b.role.value = "user"  # filters combine
    assert _html_seqs(b.html.value) == [10]
    b.role.value = widgets.ALL
    b.tool.value = None
    b.search.value = "HELLO"
    assert _html_seqs(b.html.value) == [7]
    assert "rows 1-1 of 1 (filtered from 11)" in b.status.value


def test_loop_browser_pages(agent):
    b = LoopBrowser(agent, history=True, page_size=4)
    assert b.page.max == 3
    assert _html_seqs(b.html.value) == [1, 2, 3, 4]
    b.next.click()
    assert _html_seqs(b.html.value) == [5, 6, 7, 8]
    b.page.value = 3
    assert _html_seqs(b.html.value) == [9, 10, 11]
    b.kind.value = "assistant"  # a new filter goes back to page 1 of the new result
    assert (b.page.value, b.page.max) == (1, 1)
    b.page_size.value = 1
    b.kind.value = widgets.ALL
    assert b.page.max == 11


def test_loop_browser_scope_switch(agent):
    b = LoopBrowser(agent)
    b.kind.value = "assistant"
    b.scope.value = "history"
    assert b.kind.value == widgets.ALL  # filters reset with the rows they apply to
    assert b.n_matches == 11
    assert "compaction_summary" in b.kind.options


def test_loop_tab_rendering(agent):
    b = LoopBrowser(agent, history=True)
    html = b.html.value
    # Tool calls and results are expandable, results say which tool, errors are marked.
    assert html.count('<details class="adf-tool-use">') == 3
    assert "&#8627; error of <b>fs_read</b>" in html
    assert "&#8627; result of <b>msg_send</b>" in html
    assert "Context compacted, audited" in html
    assert "archived (audit #1)" in html
    assert "&quot;path&quot;: &quot;b.md&quot;" in html  # tool input, pretty JSON, escaped


def test_loop_browser_on_sample_matches_ground_truth():
    truth = json.loads(sample("long-runner").with_suffix(".truth.json").read_text())
    with adfkit.open_adf(sample("long-runner")) as a:
        b = LoopBrowser(a, history=True)
        assert b.n_matches == truth["n_history"]
        b.kind.value = "compaction_summary"
        assert b.n_matches == len(truth["compactions"])
        b.kind.value = "context"
        assert b.n_matches == sum(truth["context_blocks"].values())
        assert _html_seqs(b.html.value)[:3] == [r["seq"] for r in truth["context_rows"][:3]]
        b.kind.value = widgets.ALL
        b.scope.value = "loop"
        assert b.n_matches == truth["n_live"]


def test_loop_browser_100k_rows_filters_and_pages():
    """A 100,000-row frame: filters are masks, and only the page is rendered."""
    with adfkit.open_adf(sample("long-runner")) as a:
        h = a.history()
    reps = -(-100_000 // len(h))
    big = pd.concat([h] * reps, ignore_index=True).iloc[:100_000].copy()
    big["seq"] = pd.array(range(1, len(big) + 1), dtype="Int64")
    b = LoopBrowser(big, page_size=25)
    assert b.n_matches == 100_000
    assert b.page.max == 4000
    b.page.value = 4000
    assert _html_seqs(b.html.value) == list(range(99_976, 100_001))
    b.kind.value = "context"
    expected = int((big["kind"] == "context").sum())
    assert b.n_matches == expected
    assert len(_html_seqs(b.html.value)) == 25


# -- AuditExplorer -------------------------------------------------------------------------


def test_audit_explorer_decodes_each_row(agent):
    x = AuditExplorer(agent)
    assert [v for _, v in x.select.options] == [1, 2, 3, 4]
    assert _html_seqs(x.html.value) == [1, 2, 3, 4, 5]  # first row: the archived loop
    assert "5 archived loop rows" in x.html.value
    x.select.value = 2
    assert "hi there" in x.html.value
    assert _html_seqs(x.html.value) == []
    x.select.value = 3
    assert "old &lt;b&gt;text&lt;/b&gt;" in x.html.value  # the file's decoded content
    x.select.value = 4
    assert "Could not decode" in x.html.value
    assert "brotli" in x.html.value.lower()


def test_audit_explorer_without_audit(tmp_path):
    p = build(tmp_path / "n.adf", loop=LIVE[1:3])
    with adfkit.open_adf(p) as a:
        x = AuditExplorer(a)
        assert "no audit rows" in x.html.value


# -- ReplayPlayer --------------------------------------------------------------------------


def test_replay_player_window_and_composition(agent):
    p = ReplayPlayer(agent)
    assert _seqs(p.calls) == [3, 5, 9, 11]
    assert (p.call.min, p.call.max) == (1, 4)  # numbered from 1, as the title says
    p.call.value = 1
    assert p.call_seq == 3
    w = p.window  # the system prompt in force, then the conversation
    assert _seqs(w[w["part"] == "system"]) == [2]
    assert _seqs(w[w["part"] == "message"]) == [1]
    # After the compaction the conversation starts at the summary: nothing swept is in it,
    # and the dynamic instructions come last, as the model received them.
    p.call.value = 3
    assert p.call_seq == 9
    assert "call 3 of 4 (seq 9)" in p.html.value
    w = p.window
    assert _seqs(w[w["part"] == "message"]) == [6, 7]
    assert _seqs(w)[-1] == 8 and w["part"].iloc[-1] == "dynamic"
    # The runtime's estimator (ADF_FORMAT.md 9.1): (text length + 16) / 3.5 per message.
    expected = {"compaction_summary": (len(SUMMARY) + 16) / 3.5, "message": (11 + 16) / 3.5}
    comp = p.composition
    for part, tokens in expected.items():
        assert comp[part] == pytest.approx(tokens)
    assert comp["assistant"] == 0 and comp["tool_result"] == 0  # nothing of those since S6
    html = p.html.value
    for kind, tokens in expected.items():
        assert re.search(rf'<tr data-kind="{kind}">.*?>{round(tokens):,}</td>', html)
    assert 'data-kind="assistant"' not in html.split("<table")[1].split("</table>")[0]
    assert _html_seqs(html) == _seqs(w)
    assert "in 400 / out 20 tokens" in html


def test_replay_player_across_a_sample_compaction():
    truth = json.loads(sample("long-runner").with_suffix(".truth.json").read_text())
    first = truth["compactions"][0]
    with adfkit.open_adf(sample("long-runner")) as a:
        p = ReplayPlayer(a)
        after = [i for i, s in enumerate(p.calls["seq"], 1) if s > first["summary_seq"]][0]
        p.call.value = after
        w = p.window
        seqs = set(_seqs(w[w["part"] == "message"]))
        assert first["summary_seq"] in seqs
        assert not seqs & set(first["swept_seqs"])
        p.call.value = after - 1  # the grace call before it still saw the swept rows
        w = p.window
        assert set(_seqs(w[w["part"] == "message"])) & set(first["swept_seqs"])


# -- escaping ------------------------------------------------------------------------------


def test_pure_renderers_escape():
    page = pd.DataFrame(
        {
            "seq": [1],
            "role": ["user"],
            "kind": ["message"],
            "content": [json.dumps([{"type": "text", "text": SCRIPT}])],
        }
    )
    html = widgets.rows_html(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert" not in html
    assert "<img src=x" not in widgets.composition_html({IMG: 3}, title=IMG)
    assert "<img src=x" not in widgets.audit_html({"ref": IMG}, ValueError(IMG))


def test_hostile_agent_renders_inert(tmp_path):
    """Every widget, every page, every audit row, every call: no live markup from the file."""
    hostile = [
        row(1, "user", text(f"hi {SCRIPT} {IMG}")),
        row(2, "user", text(f"[Context: system_prompt] {SCRIPT} {IMG}")),
        row(3, "assistant", [use("x1", f"fs_{IMG}", {"path": SCRIPT, IMG: IMG})], tokens=TOK),
        row(4, "user", [result("x1", f"{SCRIPT}{IMG}", is_error=True)]),
        row(5, "assistant", [{"type": "thinking", "thinking": SCRIPT}] + text(IMG), tokens=TOK),
    ]
    live = [
        row(6, "user", text(f"[Loop Compacted, audited] {SCRIPT}"), tokens=TOK, model=IMG),
        row(7, "user", text(f"[Context: dynamic_instructions] {IMG}")),
        row(8, "assistant", text(SCRIPT), tokens=TOK, model=SCRIPT),
    ]
    p = build(
        tmp_path / "h.adf",
        loop=live,
        audit=[
            {"source": "loop", "rows": hostile},
            {"source": "inbox_message", "value": {"id": SCRIPT, "payload": {"content": IMG}}},
            {
                "source": "file",
                "value": {"path": f"{SCRIPT}.md", "content_base64": _b64(IMG), "size": 1},
                "ref": f"{IMG}.md",
            },
        ],
        files={f"{SCRIPT}{IMG}.md": IMG},
    )
    outputs: list[str] = []
    with adfkit.open_adf(p) as a:
        b = LoopBrowser(a, page_size=2)
        for scope in ("loop", "history"):
            b.scope.value = scope
            for page in range(1, b.page.max + 1):
                b.page.value = page
                outputs.append(b.html.value)
        b.tool.value = f"fs_{IMG}"
        outputs.append(b.html.value)
        outputs.append(b._repr_mimebundle_()["text/html"])
        x = AuditExplorer(a)
        for _, aid in x.select.options:
            x.select.value = aid
            outputs.append(x.html.value)
        r = ReplayPlayer(a)
        for i in range(1, r.call.max + 1):
            r.call.value = i
            outputs.append(r.html.value)
    blob = "\n".join(outputs)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in blob  # the text is shown...
    assert "&lt;img src=x onerror=alert(1)&gt;" in blob
    assert "<script>alert" not in blob  # ...but never as markup
    assert "<img src=x onerror" not in blob


def test_replay_player_steps_and_jumps_to_compactions():
    """Usable at thousands of calls: step buttons, a typed number, jumps between compactions."""
    with adfkit.open_adf(sample("long-runner")) as a:
        p = ReplayPlayer(a)
        comp = a.compactions()
    assert p.call.layout.width == "100%"
    p.next_call.click()
    p.next_call.click()
    p.prev_call.click()
    assert p.call.value == 2
    p.next_compaction.click()
    first = int(comp["summary_seq"].dropna().iloc[0])
    # The first call after the first compaction: its window starts at that summary.
    assert p.call_seq == int(p.calls.loc[p.calls["seq"] > first, "seq"].iloc[0])
    here = p.call.value
    p.next_compaction.click()
    assert p.call.value > here
    p.prev_compaction.click()
    assert p.call.value == here
    label, target = p.compaction.options[2]
    p.compaction.value = target
    assert p.call.value == target and label.startswith("compaction 2")
    p.prev_call.click()
    for _ in range(5):
        p.prev_call.click()
    p.call.value = 1
    p.prev_call.click()
    assert p.call.value == 1  # never below the first call


def test_h63_a_tool_named_like_a_list_or_the_all_option_is_one_filter(tmp_path):
    from adfbuild import build, result, row, text, use

    loop = [
        row(1, "user", text("go")),
        row(2, "assistant", [use("t1", "a,b", {})], tokens={"input": 5}),
        row(3, "user", [result("t1", "one")]),
        row(4, "assistant", [use("t2", "(all)", {})], tokens={"input": 6}),
        row(5, "user", [result("t2", "two")]),
    ]
    f = build(tmp_path / "tools.adf", loop=loop)
    with adfkit.open_adf(f) as a:
        b = LoopBrowser(a)
    assert [v for _, v in b.tool.options] == [None, "(all)", "a,b"]
    b.tool.value = "a,b"
    assert _seqs(b.page_frame) == [2, 3]
    b.tool.value = "(all)"
    assert _seqs(b.page_frame) == [4, 5]
    b.tool.value = None
    assert _seqs(b.page_frame) == [1, 2, 3, 4, 5]


def test_h61_agent_text_is_marked_for_mathjax_to_leave_alone():
    import pandas as pd

    page = pd.DataFrame(
        {
            "seq": [1],
            "role": ["user"],
            "kind": ["message"],
            "content": ['[{"type":"text","text":"$$x^2$$"}]'],
        }
    )
    html = widgets.rows_html(page)
    assert 'class="adf-loop tex2jax_ignore mathjax_ignore"' in html and "$$x^2$$" in html
    assert "tex2jax_ignore" in widgets.composition_html({"message": 3})


def test_a_text_search_marks_its_matches_escaped_and_opens_their_fold():
    page = pd.DataFrame(
        {
            "seq": [1, 2],
            "role": ["user", "user"],
            "kind": ["message", "tool_result"],
            "content": [
                '[{"type":"text","text":"<b>Needle</b> and needle"}]',
                '[{"type":"tool_result","tool_use_id":"t","content":"a needle here"}]',
            ],
        }
    )
    html = widgets.rows_html(page, mark="needle")
    assert "&lt;b&gt;<mark>Needle</mark>&lt;/b&gt; and <mark>needle</mark>" in html
    assert '<details open class="adf-tool-result">' in html  # the match inside shows
    assert "<mark>" not in widgets.rows_html(page)  # no search, no marks


def test_loop_browser_pager_buttons_follow_the_page():
    b = LoopBrowser(adfkit.open_adf(sample("long-runner")), page_size=10)
    assert b.prev.disabled and not b.next.disabled
    b.page.value = b.page.max
    assert b.next.disabled and not b.prev.disabled
    assert b.tool.index == 0 and b.tool.value is None  # "(all)" chosen, shown in the browser


def test_audit_explorer_pages_through_every_archived_row():
    agent = adfkit.open_adf(sample("long-runner"))
    x = AuditExplorer(agent, max_rows=20)
    sizes = {int(r.id): int(r.entry_count) for r in agent.audit().itertuples()}
    big = max(sizes, key=sizes.get)
    x.select.value = big
    n = len(agent.decode_audit(big))
    assert n > 20 and x.page.max == -(-n // 20)
    seen = []
    for page in range(1, x.page.max + 1):
        x.page.value = page
        seen += [int(s) for s in re.findall(r'data-seq="(\d+)"', x.html.value)]
    assert seen == agent.decode_audit(big)["seq"].astype(int).tolist()  # all, once, in order
    assert f"rows {20 * (x.page.max - 1) + 1}-{n} shown" in x.html.value


def test_replay_player_shows_the_call_once_and_its_jump_menu_follows():
    p = ReplayPlayer(adfkit.open_adf(sample("long-runner")))
    assert p.call.readout is False and p.typed.value == p.call.value
    target = p.compaction.options[1][1]
    p.compaction.value = target
    assert p.call.value == target
    p.next_call.click()
    assert p.compaction.value == 0  # "(jump to a compaction)", not the stale choice
    p.prev_call.click()
    assert p.compaction.value == target


def test_one_palette_for_the_parts_in_plots_and_widgets():
    from adfkit import plots

    for part, column in widgets.COMPOSITION_PARTS:
        assert widgets.PART_COLORS[part] == plots.COMPOSITION_PARTS[column][1]
    html = widgets.composition_html({"tool_result": 10, "system_prompt": 5})
    assert plots.COMPOSITION_PARTS["tool_result_tokens"][1] in html


def test_replay_player_stacks_what_the_file_does_not_hold():
    """Issue 19.5 in the widget: the reported input beyond the estimate is its own part."""
    agent = adfkit.open_adf(sample("long-runner"))
    p = ReplayPlayer(agent)
    p.call.value = 5
    comp = p.composition
    rep = agent.replay().set_index("seq").loc[p.call_seq]
    parts = comp.drop("not_in_file")
    assert comp["not_in_file"] == pytest.approx(max(0.0, rep["tokens_input"] - parts.sum()))
    assert "not_in_file" in p.html.value
