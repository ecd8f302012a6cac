"""Erasure requests: where one person's data lives, how to clean each place, and evidence."""
