"""Answers as documents for people: the pre-deploy check (``check``), policy reports
(``policy``), a model version's provenance (``provenance``) as text, Markdown or JSON, the status
page (``status_page``), and names made inert in Markdown and Mermaid (``markup``)."""
