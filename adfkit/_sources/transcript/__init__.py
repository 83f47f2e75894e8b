"""The transcript kit every JSONL/JSON format shares (kit) and the
AgentSource over a parsed transcript (source)."""
