"""Unit tests of the policy wing: impact.policy and the policy file, watch, gates and reports."""
