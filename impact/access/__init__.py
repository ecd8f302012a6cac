"""Access: which lineage a caller may see and write (``impact.access.grants``)."""
