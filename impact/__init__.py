"""Impact analysis: blast radius, root cause, GDPR reach and change checks."""
