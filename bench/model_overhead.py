"""Overhead of the model seam versus a bare google-genai call, and cache-hit latency.

Usage (figures recorded in docs/benchmarks.md, section "Model layer"):

    .venv/bin/python bench/model_overhead.py --calls 400 --rounds 5

Both sides talk to the fake Gemini server (testkit/fake_gemini.py) on loopback, with no added
latency, so the difference is what the seam itself costs per call:

- ``bare``: ``await client.aio.models.generate_content(...)`` with the same config the backend sends
  (JSON, pydantic ``response_schema``, thinking config, retry options), then ``.text``, on an event
  loop in the main thread;
- ``seam``: ``ModelClient.call(...)`` from the main thread — hop to the client's loop thread,
  concurrency cap, backend, pydantic validation of the text, cost, one journal line written and
  flushed to a file; cache off;
- ``cache hit``: ``ModelClient.call(...)`` with the cache on and the entry present (no HTTP at all).

Each iteration makes one bare call then one seam call (on the same thread; the bare client's loop is
idle during the blocking seam call), so drift and background load hit both alike; the overhead is the
median of the per-iteration differences. A second, less noisy figure comes from inside: the seam
call's wall time minus the backend's own ``generate`` time (the journal's ``latency_s``), i.e. what the
layer adds around the HTTP call. Targets: overhead ≤ 2 ms per call or ≤ 5 % of a bare call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT_ROOT))  # the fake server lives in testkit/ (not an installed package)

from google.genai import types  # noqa: E402

from testkit.fake_gemini import FakeGemini, Reply  # noqa: E402
from veille.backends import build_client  # noqa: E402
from veille.models.base import ModelRequest  # noqa: E402
from veille.models.gemini import GeminiModel  # noqa: E402
from veille.roles.critic import evaluation_schema  # noqa: E402
from veille.settings import Settings  # noqa: E402

CRITERIA = {"clarte": "Phrases courtes", "precision": "Chiffres sourcés", "structure": "Sections attendues"}
ANSWER = {"clarte": 4, "precision": 5, "structure": 4, "remarks": ["Raccourcir la phrase 3.", "Citer [2]."]}
SYSTEM = "Tu es un critique exigeant. Évalue le brouillon selon la grille."
PROMPT = "Brouillon :\n" + "Le débit mesuré atteint 1 200 requêtes par seconde [1]. " * 40


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=400, help="calls per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    os.environ.setdefault("GEMINI_API_KEY", "bench-fake-key")
    schema = evaluation_schema(CRITERIA)
    with FakeGemini() as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = lambda body, model: Reply.json(ANSWER)
        settings = Settings(
            backend="gemini",
            gemini_base_url=server.base_url,
            gemini_api_version="v1beta",
            warehouse_dir=Path(tmp) / "warehouse",
            use_cache=False,
        )
        seam = build_client(settings, run_id="bench", journal_path=Path(tmp) / "calls.jsonl")
        cached = build_client(settings.model_copy(update={"use_cache": True}), run_id="bench-cache")

        # The bare side: the same SDK options and request config as the backend, without the seam.
        backend = GeminiModel(settings)
        sdk = backend._sdk()
        role = settings.roles["critic"]
        request = ModelRequest(
            role="critic",
            model=role.model,
            system=SYSTEM,
            prompt=PROMPT,
            output_schema=schema,
            temperature=role.temperature,
            thinking=role.thinking,
        )
        config = backend._config(request)
        contents = [types.Content(role="user", parts=[types.Part(text=PROMPT)])]

        journal = seam.journal

        async def measure(rounds: int, n: int) -> tuple[list[float], list[float], list[float], list[float]]:
            """Alternate one bare call and one seam call, so both see the same conditions."""
            bare, through, inside = [], [], []
            for _ in range(rounds):
                for _ in range(n):
                    t0 = time.perf_counter()
                    response = await sdk.aio.models.generate_content(
                        model=role.model, contents=contents, config=config
                    )
                    _ = response.text
                    t1 = time.perf_counter()
                    # Blocking call from this thread: the bare client's loop is idle meanwhile.
                    seam.call("critic", SYSTEM, PROMPT, schema)
                    t2 = time.perf_counter()
                    bare.append(t1 - t0)
                    through.append(t2 - t1)
                    inside.append(journal.records()[-1].latency_s)  # the backend's own time
            hits = []
            for _ in range(rounds * n):
                t0 = time.perf_counter()
                cached.call("critic", SYSTEM, PROMPT, schema)
                hits.append(time.perf_counter() - t0)
            return bare, through, inside, hits

        async def run() -> tuple[list[float], list[float], list[float], list[float]]:
            await measure(1, 20)  # warm-up: connections, imports, pydantic schema caches
            cached.call("critic", SYSTEM, PROMPT, schema)  # fills the cache entry
            try:
                return await measure(args.rounds, args.calls)
            finally:
                await backend.aclose()

        bare, through, inside, hits = asyncio.run(run())
        seam.close()
        cached.close()

    paired = [t - b for t, b in zip(through, bare, strict=True)]
    layer = [t - i for t, i in zip(through, inside, strict=True)]
    bare_ms = statistics.median(bare) * 1000
    figures = {
        "calls_per_side": len(bare),
        "bare_median_ms": round(bare_ms, 3),
        "bare_p90_ms": round(percentile(bare, 0.9) * 1000, 3),
        "seam_median_ms": round(statistics.median(through) * 1000, 3),
        "seam_p90_ms": round(percentile(through, 0.9) * 1000, 3),
        "overhead_paired_median_ms": round(statistics.median(paired) * 1000, 3),
        "overhead_paired_pct": round(statistics.median(paired) / statistics.median(bare) * 100, 1),
        "layer_time_median_ms": round(statistics.median(layer) * 1000, 3),
        "layer_time_p90_ms": round(percentile(layer, 0.9) * 1000, 3),
        "cache_hit_median_ms": round(statistics.median(hits) * 1000, 3),
        "cache_hit_p90_ms": round(percentile(hits, 0.9) * 1000, 3),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    print("| measure | median (ms) | p90 (ms) |")
    print("|---|---|---|")
    print(f"| bare SDK call | {figures['bare_median_ms']} | {figures['bare_p90_ms']} |")
    print(f"| ModelClient.call, cache off | {figures['seam_median_ms']} | {figures['seam_p90_ms']} |")
    print(
        f"| seam overhead, paired (seam − bare, same iteration) | {figures['overhead_paired_median_ms']} | |"
    )
    print(
        f"| time spent outside the backend's generate() (hop, cap, validation, cost, journal) | "
        f"{figures['layer_time_median_ms']} | {figures['layer_time_p90_ms']} |"
    )
    print(
        f"| ModelClient.call, cache hit | {figures['cache_hit_median_ms']} | {figures['cache_hit_p90_ms']} |"
    )
    print(
        f"\npaired overhead: {figures['overhead_paired_median_ms']} ms per call "
        f"({figures['overhead_paired_pct']} % of a bare call), {figures['calls_per_side']} calls per side"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
