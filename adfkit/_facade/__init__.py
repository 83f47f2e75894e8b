"""The public classes behind adfkit's names: AgentFile, fleets, the fleet index,
reports."""
