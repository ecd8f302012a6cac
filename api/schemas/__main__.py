"""Print the API's OpenAPI document (``python -m api.schemas > docs/openapi.json``)."""

from __future__ import annotations

import json

from api.app import create_app
from graph.settings import Settings

print(json.dumps(create_app(Settings()).openapi(), indent=1, sort_keys=True))
