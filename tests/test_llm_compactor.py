"""The LLM compactor against a local server that speaks the Anthropic Messages and OpenAI Chat
Completions APIs and answers from a script (no network): the request it sends, the answer
scored like any window, the on-disk cache (a rerun sends nothing), the budget cap, no key no
call."""

from __future__ import annotations

import ast
import json
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import adfkit
from adfkit._analysis.llm_compactor import DEFAULT_PROMPT, JUDGE_PROMPT
from adfkit._base.errors import AdfError
from adfsynth import forgetting as f
from adfsynth.lab import write_session

MODEL = "claude-sonnet-4-5-20250929"  # 3 USD in, 15 USD out per million tokens
#: The script: one answer per request, in order: (text, input tokens, output tokens).
SCRIPT = [
    (f"Summary: {f.RULE}. Edited {f.LIMITS}; ran `{f.COMMAND}`.", 14_000, 120),
    (f"Summary: edited {f.UPLOAD}.", 7_000, 40),
]


def judged(body: dict) -> str:
    """The scripted judge: "yes" where the question's quoted value is in the context as
    written, else "no"."""
    context, _, questions = body["messages"][0]["content"].rpartition("\n\nQuestions:\n")
    answers = []
    for q in questions.splitlines():
        value = ast.literal_eval(q[q.index("'") if "'" in q else q.index('"') : q.rindex("?")])
        answers.append("yes" if value in context else "no")
    return json.dumps(answers)


class Server:
    """A scripted provider on 127.0.0.1: every request logged, each answered with the next
    line of the script (or ``status`` when set)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.status = 200
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append({"path": self.path, "headers": headers, "body": body})
                if server.status != 200:
                    reply, status = {"error": {"message": "overloaded"}}, server.status
                elif body.get("system") == JUDGE_PROMPT:
                    reply, status = server.answer(self.path, judged(body), 500, 20), 200
                else:
                    text, tin, tout = SCRIPT[(len(server.requests) - 1) % len(SCRIPT)]
                    reply, status = server.answer(self.path, text, tin, tout), 200
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def answer(path: str, text: str, tin: int, tout: int) -> dict:
        if path == "/v1/messages":
            return {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": tin, "output_tokens": tout},
            }
        return {
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout},
        }

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    path, _ = write_session(tmp_path_factory.mktemp("llm"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield adfkit.open(path)


@pytest.fixture
def keyed(monkeypatch):
    for name in ("ADFKIT_LLM_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ADFKIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ADFKIT_LLM_API_KEY", "test-key-123")


def _spec(server, tmp_path, api="anthropic", **extra):
    params = {"model": MODEL, "api": api, "base_url": server.url, "cache": tmp_path / "cache"}
    params.update(extra)
    return "llm:" + ",".join(f"{k}={v}" for k, v in params.items())


def test_anthropic_request_answer_score_and_cost(agent, server, keyed, tmp_path):
    lab = agent.compaction_lab([_spec(server, tmp_path)])
    assert len(server.requests) == 2
    req = server.requests[0]
    assert req["path"] == "/v1/messages"
    assert req["headers"]["x-api-key"] == "test-key-123"
    assert req["headers"]["anthropic-version"] == "2023-06-01"
    body = req["body"]
    assert body["model"] == MODEL and body["system"] == DEFAULT_PROMPT
    assert body["max_tokens"] == 256  # the recorded summary's 96 tokens, at least 256
    sent = body["messages"][0]["content"]
    assert f.COMMAND in sent and f.ERROR in sent and sent.startswith("[message] ")
    first = lab.iloc[0]
    # the answer keeps the rule, the limits path, the command and the test path in it: 4 of 5
    assert (first["n_needed"], first["n_needed_kept"]) == (5, 4)
    assert first["compaction_cost_usd"] == pytest.approx((14_000 * 3 + 120 * 15) / 1e6)
    assert lab["note"].tolist() == [f"answered by {MODEL}"] * 2


def test_a_rerun_answers_from_the_cache_and_sends_nothing(agent, server, keyed, tmp_path):
    first = agent.compaction_lab([_spec(server, tmp_path)])
    assert len(server.requests) == 2
    again = agent.compaction_lab([_spec(server, tmp_path)])
    assert len(server.requests) == 2  # nothing sent
    assert again["note"].tolist() == ["cached answer: no request made"] * 2
    cols = ["tokens_after", "n_needed_kept", "compaction_cost_usd"]
    assert again[cols].equals(first[cols])
    # the key is not part of what the cache holds
    assert not any(b"test-key-123" in p.read_bytes() for p in (tmp_path / "cache").iterdir())


def test_openai_compatible_endpoint(agent, server, keyed, tmp_path):
    lab = agent.compaction_lab([_spec(server, tmp_path, api="openai", base_url=server.url + "/v1")])
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["authorization"] == "Bearer test-key-123"
    roles = [m["role"] for m in req["body"]["messages"]]
    assert roles == ["system", "user"] and req["body"]["messages"][0]["content"] == DEFAULT_PROMPT
    assert lab["n_needed_kept"].tolist()[0] == 4


def test_the_budget_cap_refuses_a_request_that_could_pass_it(agent, server, keyed, tmp_path):
    # the first request could take about 14,800 tokens (the window's 14,202, the prompt, 256
    # to answer); it took 14,120; the second could take about 7,800 more: past 20,000
    lab = agent.compaction_lab([_spec(server, tmp_path, budget_tokens=20_000)])
    assert len(server.requests) == 1
    assert lab["tokens_after"].notna().tolist() == [True, False]
    assert lab["note"].iloc[1].startswith("not sent: the request could take")
    assert "14,120 of the budget of 20,000" in lab["note"].iloc[1]
    lab = agent.compaction_lab([_spec(server, tmp_path, budget_usd=0.01, cache=tmp_path / "c2")])
    assert len(server.requests) == 1  # the first could cost about 0.047 USD: none sent
    assert lab["recall"].isna().all() and lab["note"].str.contains("0.0100 USD").all()


def test_an_endpoint_error_is_a_note_and_is_not_cached(agent, server, keyed, tmp_path):
    server.status = 529
    lab = agent.compaction_lab([_spec(server, tmp_path)])
    assert lab["note"].str.contains("answered 529").all() and lab["recall"].isna().all()
    server.status = 200
    lab = agent.compaction_lab([_spec(server, tmp_path)])
    assert len(server.requests) == 4 and lab["recall"].notna().tolist() == [True, False]


def test_no_key_no_call(agent, server, monkeypatch, tmp_path, capsys):
    from adfkit.cli import main

    for name in ("ADFKIT_LLM_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AdfError, match="no API key in the environment .*ANTHROPIC_API_KEY"):
        agent.compaction_lab([_spec(server, tmp_path)])
    assert main(["lab", str(agent.path), "--compactor", _spec(server, tmp_path)]) == 2
    assert "no call is made without one" in capsys.readouterr().err
    assert server.requests == []


def test_the_llm_judge_is_reported_apart(agent, server, keyed, tmp_path):
    settings = f"model={MODEL},base_url={server.url},cache={tmp_path / 'cache'}"
    plain = agent.compaction_lab(["recorded", "trim"])
    lab = agent.compaction_lab(["recorded", "trim"], judge=settings)
    # one request per new window with items needed again: the first compaction's two
    assert len(server.requests) == 2
    q = server.requests[0]["body"]["messages"][0]["content"].rpartition("Questions:\n")[2]
    assert q.splitlines()[0] == f"1. Does the context tell the agent this instruction: {f.RULE!r}?"
    first = lab[lab["event_id"] == 0]
    # the summary keeps the rule and the limits path in other words: the deterministic rule
    # counts them, this judge (yes only to the value as written) does not; trim keeps all
    assert first["judge_recall"].tolist() == [0.0, 1.0]
    assert first["judge_n"].tolist() == [5, 5]
    assert lab["recall"].fillna(-1).tolist() == plain["recall"].fillna(-1).tolist()  # apart
    assert lab.loc[lab["event_id"] == 1, "judge_recall"].isna().all()  # nothing to ask
    agent.compaction_lab(["recorded", "trim"], judge=settings)
    assert len(server.requests) == 2  # cached
    assert plain["judge_recall"].isna().all()  # no judge: NA, not 0
