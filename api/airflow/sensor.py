"""An Airflow sensor that waits on lineage-graph's gate (``GET /api/v1/gate``, impact.policy.gate): the
task after it runs only once the dataset it names may be consumed.

    from api.airflow.sensor import LineageGateSensor

    gate = LineageGateSensor(task_id="gate_overview", url="http://lineage:5000",
                             datasets=[("duckdb:///shop.duckdb", "shop.marts.country_kpis")],
                             poke_interval=30, timeout=3600)
    gate >> publish_overview

While a gate is closed the sensor logs why (each cause and its path) at every poke; past its
``timeout`` it fails with the causes, so the task after it does not run and its log says why. A
gate that cannot be asked (lineage-graph down) counts as closed: the sensor waits. With
``fail_when_closed=True`` it fails at the first closed answer instead of waiting (a failed
upstream run will not mend itself within the night). Needs only the standard library and
Airflow (``pip install lineage-graph`` into Airflow's environment, or put this file on its
path); ``LINEAGE_API_TOKEN`` in the worker's environment, or ``token=``, when the API requires one.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

try:
    from airflow.sdk import BaseSensorOperator
except ImportError:  # outside Airflow: ask_gate still works
    BaseSensorOperator = object


def ask_gate(url: str, namespace: str, name: str, token: str | None = None,
             timeout: float = 30.0) -> dict[str, Any]:
    """The gate's answer for one dataset (``open``, ``why``, ``causes``); a gate that cannot be
    asked is answered closed, with the reason."""
    query = urllib.parse.urlencode({"namespace": namespace, "name": name})
    request = urllib.request.Request(f"{url.rstrip('/')}/api/v1/gate?{query}",
                                     headers={"Accept": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            body: dict[str, Any] = json.loads(answer.read())
            return body
    except urllib.error.HTTPError as e:
        detail = e.read()[:500].decode("utf-8", "replace")
        reason = f"lineage-graph answered {e.code}: {detail}"
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = f"lineage-graph could not be asked: {e}"
    return {"open": False, "why": f"closed: {reason}", "causes": [], "unanswered": True}


class LineageGateSensor(BaseSensorOperator):  # type: ignore[misc]
    """Waits until the gate of every dataset in ``datasets`` is open (see the module's doc)."""

    template_fields = ("datasets",)

    def __init__(self, *, url: str, datasets: Sequence[tuple[str, str]], token: str | None = None,
                 fail_when_closed: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.url = url
        self.datasets = [tuple(d) for d in datasets]
        self.token = token or os.environ.get("LINEAGE_API_TOKEN")
        self.fail_when_closed = fail_when_closed
        self._last: list[str] = []

    def poke(self, context: Any) -> bool:
        closed = []
        for namespace, name in self.datasets:
            answer = ask_gate(self.url, namespace, name, self.token)
            if answer.get("open"):
                self.log.info("lineage gate open: %s:%s", namespace, name)
                continue
            closed.append(answer["why"])
            self.log.warning("lineage gate %s", answer["why"])
            for cause in answer.get("causes") or []:
                path = " -> ".join(cause.get("path") or [])
                self.log.warning("  %s: %s%s", cause["kind"], cause["what"],
                                 f" (path {path})" if len(cause.get("path") or []) > 1 else "")
        self._last = closed
        if closed and self.fail_when_closed:
            raise RuntimeError("lineage gate closed: " + " | ".join(closed))
        return not closed

    def execute(self, context: Any) -> Any:
        try:
            return super().execute(context)
        except Exception as e:
            if self._last:  # a timeout: say why, not only that the time ran out
                raise RuntimeError("lineage gate still closed when the sensor timed out: "
                                   + " | ".join(self._last)) from e
            raise
