"""What the Prefect UI shows of a veille run, read in a real browser (issue 15 item 10).

Not part of the suite: it needs Chromium and Playwright, which the project does not install.

    apt-get install -y chromium                       # Debian's package: /usr/bin/chromium
    python3 -m venv /tmp/pw && /tmp/pw/bin/pip install playwright httpx
    make server PREFECT_PORT=4391 &                   # a server on loopback (UI on 127.0.0.1:4391)
    PREFECT_API_URL=http://127.0.0.1:4391/api VEILLE_WAREHOUSE_DIR=/tmp/ui/wh \\
      .venv/bin/python -c "from veille.flows.veille import veille_flow; \\
      veille_flow(corpus='corpus', backend='offline', fail_subtasks=['st-2'], return_state=True)"
    /tmp/pw/bin/python bench/ui_check.py --api http://127.0.0.1:4391 --out /tmp/ui

It opens the last flow run's page and its artifacts, prints what a user reads there (run name,
state message, the report's Sources labels, the metrics rows) and saves screenshots.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", default="http://127.0.0.1:4391")
    parser.add_argument("--out", type=Path, default=Path("/tmp/ui"))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    run = httpx.post(f"{args.api}/api/flow_runs/filter", json={"limit": 1, "sort": "START_TIME_DESC"}).json()[
        0
    ]
    artifacts = {
        a["key"]: a
        for a in httpx.post(
            f"{args.api}/api/artifacts/filter", json={"flow_runs": {"id": {"any_": [run["id"]]}}}
        ).json()
    }
    print(f"flow run name: {run['name']}; state: {run['state_type']}; message: {run['state']['message']}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(f"{args.api}/runs/flow-run/{run['id']}", wait_until="networkidle")
        time.sleep(3)
        page.screenshot(path=str(args.out / "flow-run.png"))
        print(f"flow run page title: {page.title()}")
        for key, artifact in artifacts.items():
            page.goto(f"{args.api}/artifacts/artifact/{artifact['id']}", wait_until="networkidle")
            time.sleep(3)
            page.screenshot(path=str(args.out / f"{key}.png"), full_page=True)
            text = page.inner_text("body")
            print(f"artifact {key} ({artifact['type']}): {artifact.get('description')}")
            if artifact["type"] == "markdown":
                sources = text[text.rfind("Sources") :]
                labels = [int(n) for n in re.findall(r"^\s*\[(\d+)\]", sources, re.M)]
                print(f"  Sources labels as shown: {labels}")
                print(f"  labels 1..n in order: {labels == list(range(1, len(labels) + 1))}")
            else:
                rows = re.findall(
                    r"^(role\.\w+|failed_branches|alert_codes|reused\.\w+|attempts)$", text, re.M
                )
                print(f"  metrics rows: {rows}")
        browser.close()


if __name__ == "__main__":
    main()
