"""What this reader knows of GitHub Copilot CLI's ``events.jsonl``: event types and fields.

From the writer's published schema and, since 1.0.102, from real files (a recording under
``tests/fixtures/recorded/copilot-cli/``: the types and fields it showed are added here):
github/copilot-sdk
``nodejs/src/generated/session-events.ts`` (``SessionEvent`` and its ``*Data`` interfaces) and
``python/copilot/generated/session_events.py`` (``SessionEventType``, the full list of type
names), as summarised in ``SOURCES-NEXT.md`` §3. The schema grows between releases, so the
fields below are the union of the versions read. Anything else in a file is reported by the
reader (``unknown_event_type``, ``unknown_field``), never dropped silently.
"""

from __future__ import annotations


def _f(s: str) -> frozenset[str]:
    return frozenset(s.split())


#: Keys of the event envelope (``SessionEvent``).
ENVELOPE = frozenset({"id", "parentId", "timestamp", "type", "data", "agentId", "ephemeral"})

#: Every event type of the schema (``SessionEventType``; ``unknown`` is the SDK's fallback, not
#: a type a file holds).
EVENT_TYPES = _f(
    """
    session.start session.resume session.remote_steerable_changed session.error session.idle
    session.title_changed session.schedule_created session.schedule_cancelled
    session.schedule_rearmed session.autopilot_objective_changed session.info
    session.indexed_search session.warning session.model_change session.model_deselected
    session.auto_tier_recommendation session.auto_tier_switch_failed session.mode_changed
    session.mode_notice_delivered session.session_limits_changed session.permissions_changed
    session.plan_changed session.todos_changed session.workspace_file_changed session.handoff
    session.truncation session.snapshot_rewind session.shutdown session.usage_checkpoint
    session.quota_observation session.context_changed session.usage_info
    session.context_cleared session.compaction_start session.compaction_complete
    session.task_complete session.completion_receipt session.fusion_route_started
    session.fusion_route_failed session.fusion_resolved session.fusion_completed
    session.permission_recovery user.message pending_messages.modified assistant.turn_start
    assistant.turn_retry agent.interrupted assistant.intent assistant.fusion_phase_started
    assistant.fusion_phase_activity assistant.fusion_phase_completed
    assistant.fusion_phase_failed assistant.server_tool_progress assistant.reasoning
    assistant.reasoning_delta assistant.tool_call_delta assistant.streaming_delta
    assistant.message assistant.message_start assistant.message_delta assistant.turn_end
    assistant.idle assistant.usage prompt_cache_break model.call_failure
    model.call_final_result model.call_finished model.call_start abort tool.user_requested
    tool.execution_start tool.execution_partial_result tool.shell_output
    tool.execution_progress tool.execution_complete tool_search.activated skill.invoked
    skill.invoked_ref skill.context_delivered skill.context_delivered_ref sandbox.decision
    subagent.started subagent.configured subagent.completed subagent.failed subagent.selected
    subagent.deselected hook.start hook.end hook.progress session.binary_asset system.message
    system.notification permission.requested permission.completed permission.carriedForward
    permission.messageAuthorization permission.messageAuthorizationRead
    permission.messageAuthorizationDegraded permission.assentDetected
    permission.contextualAuthorization user_input.requested user_input.completed
    elicitation.requested elicitation.completed sampling.requested sampling.completed
    mcp.oauth_required mcp.oauth_completed mcp.headers_refresh_required
    mcp.headers_refresh_completed session.custom_notification ui.ephemeral_query
    external_tool.requested external_tool.completed command.queued command.execute
    command.completed auto_mode_switch.requested auto_mode_switch.completed
    session_limits_exhausted.requested session_limits_exhausted.completed
    session.auto_mode_resolved session.managed_plugin_progress
    session.managed_settings_resolved session.managed_settings_enforced commands.changed
    capabilities.changed exit_plan_mode.requested exit_plan_mode.completed
    human_response.recorded session.tools_updated session.background_tasks_changed
    workflow.run_updated workflow.run_started workflow.run_settled session.skills_loaded
    session.custom_agents_updated session.mcp_servers_loaded session.mcp_server_status_changed
    session.mcp_server_removed session.mcp_server_needs_reconnect mcp.tools.list_changed
    mcp.resources.list_changed mcp.prompts.list_changed session.extensions_loaded
    session.canvas.opened session.canvas.registry_changed session.canvas.closed
    session.canvas.unavailable session.canvas.recorded session.canvas.removed
    session.extensions.attachments_pushed mcp_app.tool_call_complete
    session.usage_record model.turn_started model.model_call_started model.model_call_success
    model.message model.response model.turn_ended model.messages_snapshot
    """
)

#: The types the schema marks ``ephemeral: true`` (never written to ``events.jsonl``). One in a
#: file is read where the reader knows it (``assistant.usage``) and reported.
EPHEMERAL = frozenset(
    {
        "session.usage_info",
        "session.snapshot_rewind",
        "pending_messages.modified",
        "assistant.intent",
        "assistant.reasoning_delta",
        "assistant.streaming_delta",
        "assistant.message_start",
        "assistant.message_delta",
        "assistant.usage",
        "model.call_failure",
        "tool.execution_partial_result",
        "tool.execution_progress",
    }
)


#: ``data`` fields of the types the reader interprets (the others are counted, not read).
DATA_FIELDS: dict[str, frozenset[str]] = {
    "session.start": _f(
        "sessionId copilotVersion producer selectedModel startTime version context alreadyInUse "
        "detachedFromSpawningParentSessionId reasoningEffort reasoningSummary remoteSteerable "
        "contextTier"
    ),
    "session.resume": _f(
        "resumeTime eventCount context alreadyInUse continuePendingWork reasoningEffort "
        "reasoningSummary remoteSteerable selectedModel sessionWasActive eventsFileSizeBytes "
        "contextTier sessionLimits"
    ),
    "session.model_change": _f(
        "newModel previousModel cause previousReasoningEffort previousReasoningSummary "
        "reasoningEffort reasoningSummary source contextTier"
    ),
    "system.message": _f("content role name metadata interactionId"),
    "user.message": _f(
        "content transformedContent attachments source agentMode interactionId turnId "
        "isAutopilotContinuation nativeDocumentPathFallbackPaths parentAgentTaskId "
        "supportedNativeDocumentMimeTypes messageId delivery"
    ),
    "assistant.turn_start": _f("turnId interactionId parentToolCallId"),
    "assistant.turn_end": _f("turnId parentToolCallId"),
    "assistant.reasoning": _f("content reasoningId"),
    "assistant.message": _f(
        "messageId content toolRequests model outputTokens parentToolCallId requestId "
        "reasoningText reasoningOpaque encryptedContent interactionId phase turnId "
        "anthropicAdvisorBlocks anthropicAdvisorModel originatingMessageId rte apiCallId"
    ),
    "assistant.usage": _f(
        "model inputTokens outputTokens cacheReadTokens cacheWriteTokens reasoningTokens cost "
        "duration apiCallId apiEndpoint parentToolCallId copilotUsage initiator "
        "interTokenLatencyMs providerCallId quotaSnapshots reasoningEffort ttftMs"
    ),
    "tool.execution_start": _f(
        "toolCallId toolName arguments parentToolCallId mcpServerName mcpToolName turnId model "
        "toolTitle shellToolInfo"
    ),
    "tool.execution_complete": _f(
        "toolCallId success result error parentToolCallId interactionId isUserRequested model "
        "toolTelemetry turnId rte shellExecution fileEdits"
    ),
    "subagent.started": _f(
        "toolCallId agentName agentDisplayName agentDescription model taskModelSource "
        "modelSelectionSource resumable agentType executionMode"
    ),
    "subagent.completed": _f(
        "toolCallId agentName agentDisplayName durationMs model totalTokens totalToolCalls "
        "firstDispatchedModel modelSelectionSource"
    ),
    "subagent.failed": _f(
        "toolCallId agentName agentDisplayName durationMs error model totalTokens totalToolCalls"
    ),
    "session.compaction_start": _f(
        "conversationTokens systemTokens toolDefinitionsTokens currentTokens tokenLimit model "
        "trigger compactionAttemptId"
    ),
    "session.compaction_complete": _f(
        "success error statusCode preCompactionTokens postCompactionTokens "
        "preCompactionMessagesLength messagesRemoved tokensRemoved conversationTokens "
        "systemTokens toolDefinitionsTokens tokenLimit summaryContent customInstructions "
        "checkpointNumber checkpointPath compactionTokensUsed requestId serviceRequestId "
        "trigger outcome outcomeReason compactionAttemptId behaviorModelId tokenAccountingBasis"
    ),
    #: 1.0.102: one per model call (main and subagent), its counts under ``usage``
    "session.usage_record": _f("usage"),
    "session.truncation": _f(
        "preTruncationTokensInMessages postTruncationTokensInMessages "
        "preTruncationMessagesLength postTruncationMessagesLength "
        "messagesRemovedDuringTruncation tokensRemovedDuringTruncation tokenLimit performedBy"
    ),
    "session.shutdown": _f(
        "shutdownType errorReason totalPremiumRequests totalApiDurationMs sessionStartTime "
        "codeChanges modelMetrics currentModel currentTokens conversationTokens systemTokens "
        "toolDefinitionsTokens tokenDetails totalNanoAiu accountingSnapshot "
        "providerModelMetrics usageAccountingWatermarks eventsFileSizeBytes agentMetrics"
    ),
}

#: Fields of nested records the reader reads.
TOOL_REQUEST_FIELDS = _f(
    "toolCallId name arguments type intentionSummary mcpServerName mcpToolName toolTitle"
)
COMPACTION_USAGE_FIELDS = _f(
    "inputTokens outputTokens cacheReadTokens cacheWriteTokens duration model copilotUsage "
    "requestCount aiCreditsStatus modelDisplayName provider"
)
MODEL_METRIC_FIELDS = _f("requests usage tokenDetails totalNanoAiu")
METRIC_USAGE_FIELDS = _f(
    "inputTokens outputTokens cacheReadTokens cacheWriteTokens reasoningTokens"
)
#: ``CompactionTrigger``.
TRIGGERS = frozenset(
    {"threshold", "context_limit_retry", "manual", "memory_pressure", "model_switch"}
)
