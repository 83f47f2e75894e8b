"""Analyses: functions over an AgentSource. They know no file format."""
