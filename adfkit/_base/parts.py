"""The parts of a context window, one palette for every plot and widget that stacks them."""

from __future__ import annotations

from typing import NamedTuple


class Part(NamedTuple):
    """One part of a context window."""

    name: str  #: the row kind it counts (``kind`` or context ``subkind``)
    column: str  #: its column in ``AgentFile.replay()`` / ``composition()``
    label: str  #: how plots and widgets name it
    color: str  #: Okabe-Ito, colour-blind safe


#: In stacking order.
PARTS: tuple[Part, ...] = (
    Part("system_prompt", "system_prompt_tokens", "system prompt", "#56B4E9"),
    Part("dynamic_instructions", "dynamic_instructions_tokens", "dynamic instructions", "#F0E442"),
    Part("compaction_summary", "summary_tokens", "compaction summary", "#CC79A7"),
    Part("message", "message_tokens", "messages (chat, triggers, notices)", "#0072B2"),
    Part("assistant", "assistant_tokens", "assistant turns", "#E69F00"),
    Part("tool_result", "tool_result_tokens", "tool results", "#009E73"),
    Part("loop_inject", "inject_tokens", "loop_inject", "#D55E00"),
)

#: What a call's reported input holds beyond the estimate of what the file holds (the system
#: prompt and tool definitions the agent did not log, tokenizer differences): ``tokens_input``
#: less the parts, drawn on top of them wherever a context is stacked.
NOT_IN_FILE = Part(
    "not_in_file", "not_in_file", "not in the file (reported input - estimate)", "#BBBBBB"
)
