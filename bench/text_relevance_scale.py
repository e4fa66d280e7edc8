"""The text measure of the plan's coverage (veille.steps.text_relevance) at 2,000 documents of
real size (~19 KB): wall and CPU time.

    .venv/bin/python bench/text_relevance_scale.py
"""

import random
import time

from veille.roles.planner import CatalogueEntry
from veille.steps.text_relevance import measure

random.seed(1)
words = [f"mot{i}" for i in range(5000)] + ["débit", "latence", "licence", "sécurité", "correctif", "flotte"]
cat = [
    CatalogueEntry(
        id=f"doc-{i:04d}", date="2026-01-01", source_type="note", title=f"Titre {i} Zorblax", summary=""
    )
    for i in range(2000)
]
bodies = {e.id: " ".join(random.choices(words, k=3000)) for e in cat}
t = time.perf_counter()
c = time.process_time()
r = measure(
    "Zorblax ou Quimby",
    "Comparer Zorblax et Quimby : débit, latence, licences",
    ["Zorblax", "Quimby"],
    cat,
    bodies,
)
print(
    f"2000 docs x ~19 KB: {time.perf_counter() - t:.2f} s wall, {time.process_time() - c:.2f} s CPU; {len(r.shares)} shares"
)
