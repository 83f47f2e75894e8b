"""The reader core: the AgentSource boundary, the row rule, blobs, the merged
history, and opening a path as a source. Knows no format's parser."""
