"""Write a large Inspect ``.eval`` log with Inspect's own code (run by ``inspect_peer.py`` in
``build/inspect-venv``, where inspect-ai is installed; adfkit's venv does not have it).

Inspect's ``react`` agent, its compaction code and its ``.eval`` recorder, driven by a scripted
``mockllm`` model (the approach of the fixtures' generator, ``../shared/fixtures/inspect-eval/
generate_compaction_logs.py``, written afresh here): each sample reads ``steps`` pages with a
tool, then submits. Only the model's words and token counts are invented; every record, pool,
ref and compaction event is Inspect's. Token counting is patched to len/4 (tiktoken would fetch
its encoding from the network).

Usage: ``python gen_inspect.py OUT.eval SAMPLES STEPS {none,summary,trim}``
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import inspect_ai.model._model as _model
import inspect_ai.model._tokens as _tokens


def _len4(text: str) -> int:
    return max(1, len(text) // 4)


_model.count_text_tokens = _len4  # type: ignore[assignment]
_tokens.count_text_tokens = _len4  # type: ignore[assignment]

from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.agent import react  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    CompactionSummary,
    CompactionTrim,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import includes  # noqa: E402
from inspect_ai.tool import tool  # noqa: E402


@tool
def page() -> Any:
    async def execute(k: int) -> str:
        """Fetch page k of the report.

        Args:
          k: page number
        """
        return f"page {k}: " + " ".join(f"term{k}x{i}" for i in range(100))

    return execute


def scripted(steps: int) -> Any:
    """The mock model: a summary when Inspect's summarizer asks for one, else the next page
    until ``steps`` pages are read, then ``submit``."""
    pages: dict[str, int] = {}

    def reply(input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
        last = input[-1]
        text = getattr(last, "text", "") or ""
        size = sum(len(m.text or "") for m in input) // 4 + 180
        usage = ModelUsage(
            input_tokens=max(size - 120, 1),
            input_tokens_cache_read=120,
            input_tokens_cache_write=25,
            output_tokens=24,
            total_tokens=size + 49,
            reasoning_tokens=0,
        )
        if not tools and last.role == "user" and "summary" in text.lower():
            out = ModelOutput.from_content(
                model="mockllm/model", content="Pages read so far hold terms; go on, then submit."
            )
        else:
            first = next(m for m in input if m.role == "user").id  # the sample's prompt
            if first not in pages or last.role == "tool":
                pages[first] = pages.get(first, 0) + 1
            k = pages[first]
            if k > steps:
                out = ModelOutput.for_tool_call(
                    model="mockllm/model", tool_name="submit", tool_arguments={"answer": "ok"}
                )
            else:
                out = ModelOutput.for_tool_call(
                    model="mockllm/model", tool_name="page", tool_arguments={"k": k}
                )
        out.usage = usage
        return out

    return reply


STRATEGIES = {
    "none": None,
    "summary": CompactionSummary(threshold=1500),
    "trim": CompactionTrim(threshold=1500, preserve=0.5),
}


def write(out: Path, samples: int, steps: int, strategy: str) -> None:
    dataset = [
        Sample(
            input="Read the report page by page with page(), then submit 'ok'.", target="ok", id=i
        )
        for i in range(1, samples + 1)
    ]
    task = Task(
        dataset=dataset,
        solver=react(tools=[page()], compaction=STRATEGIES[strategy]),
        scorer=includes(),
        name=f"bench_{strategy}",
    )
    model = get_model("mockllm/model", custom_outputs=scripted(steps))
    with tempfile.TemporaryDirectory(prefix="inspect-gen-") as tmp:
        logs = eval(task, model=model, log_dir=tmp, display="none", max_samples=64)
        if not logs or logs[0].status != "success":
            raise SystemExit(f"inspect eval did not succeed: {logs[0].status if logs else None}")
        written = sorted(Path(tmp).glob("*.eval"))
        if len(written) != 1:
            raise SystemExit(f"expected one .eval log, found {len(written)}")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(written[0]), out)


if __name__ == "__main__":
    path, n, k, strat = sys.argv[1:5]
    write(Path(path), int(n), int(k), strat)
