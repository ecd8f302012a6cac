"""What keeping each run's job facets costs in store (``jobFacet.<name>`` on a Run: docs/graph-model.md,
"What changed"): over a folder of real producers' events (the shared corpus), the bytes of the
job facets each RunEvent adds to its run (as ingest.facets.capped_json stores them, with their
``@`` stamps), against the bytes of the events themselves.

    python -m bench.job_facet_bytes ../shared/corpus
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from ingest.codec import canonical
from ingest.facets import facet_props
from ingest.read import read_file

STAMP_BYTES = 44  # '@jobFacet.<name>': an event stamp (transform.stamp), besides each value


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--cap", type=int, default=16_384, help="LINEAGE_FACET_MAX_BYTES")
    a = p.parse_args()
    added: list[int] = []
    sizes: list[int] = []
    for path in sorted(a.folder.rglob("*.json")):
        if "spec" in path.parts:
            continue
        try:
            items = read_file(path)
        except (ValueError, OSError):
            continue
        for item in items:
            event = item.obj
            if not isinstance(event, dict) or not isinstance(event.get("run"), dict):
                continue
            facets = (event.get("job") or {}).get("facets")
            props = facet_props(facets if isinstance(facets, dict) else {}, a.cap)
            extra = sum(len(f"jobFacet.{k}") * 2 + len(v or "") + STAMP_BYTES
                        for k, v in props.items())
            added.append(extra)
            sizes.append(len(canonical(event)))
    if not added:
        sys.exit(f"no RunEvent under {a.folder}")
    result = {
        "run events": len(added), "with job facets": sum(1 for x in added if x),
        "job facet bytes per run event: mean": round(statistics.mean(added)),
        "median": statistics.median(added), "max": max(added),
        "event bytes: mean": round(statistics.mean(sizes)),
        "added / event bytes": round(sum(added) / sum(sizes), 3),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
