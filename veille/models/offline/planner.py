"""Offline planner: splits the request into sub-tasks over the catalogue, by lexical rules.

Steps (each one deterministic, ties broken by document id):

1. Axes come from the request's Markdown bullet list; without one, the relevant documents are
   clustered and each cluster becomes an axis.
2. Relevance: a document is kept when its title and summary share enough *non-term* vocabulary
   with the request (a request term alone, e.g. a product name used in another sense, is not
   enough), or when it is the same subject as a kept document (shared term + shared rare words).
3. Each kept document goes to its best axis (overlap weighted by how specific a word is to an
   axis, then one round of expansion with the vocabulary of the clearly-assigned documents).
   A framing document with two close axis scores goes to both.
4. Same-subject documents at different dates end up in the same sub-task.
5. An axis over ``max_docs`` is split in two sub-tasks (same-subject documents kept together)
   while ``max_subtasks`` allows it, rather than dropping documents.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from veille.models.offline.text import cosine, fold, stem, stems, weighted_vector
from veille.roles.planner import CatalogueEntry, Plan, PlannerInput, SubTask

__all__ = ["PlannerTuning", "plan"]


@dataclass(frozen=True)
class PlannerTuning:
    """Thresholds of the rules, in one place (documented in docs/offline-engine.md)."""

    strong_with_term: float = 2.0  # own request overlap that keeps a document naming a request term
    strong_without_term: float = 3.0  # ... and one that names none
    title_only_with_term: float = 1.0  # the same when only the title is known (shorter text)
    title_only_without_term: float = 2.0
    link_min_shared: int = 2  # shared non-term stems for two documents to be "the same subject"
    link_min_weight: float = 4.5  # and their summed specificity (idf)
    same_subject_cosine: float = 0.17  # title+summary similarity of a same-subject pair
    framing_ratio: float = 0.6  # second axis score / best score for a framing document to serve both
    framing_ratio_other: float = 0.9  # same, for source types not marked as framing
    framing_min_score: float = 1.0


@dataclass
class _Doc:
    entry: CatalogueEntry
    stems: list[str]
    terms: tuple[str, ...]  # request terms it names (term keys, sorted)
    vocab: frozenset[str] = field(default_factory=frozenset)  # non-term stems

    @property
    def id(self) -> str:
        return self.entry.id


@dataclass
class _Axis:
    label: str
    facets: list[str]
    text: str
    merged: bool = False  # two bullets folded into one sub-task (more axes than max_subtasks)


_BULLET_RE = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?P<text>.+)$")


def _parse_axes(request: str) -> list[_Axis]:
    """Top-level Markdown bullets of the request, as axes (label before ':' and facets after)."""
    axes: list[_Axis] = []
    for raw in request.splitlines():
        if raw[:1].isspace():
            continue  # nested bullets refine their parent; they are not axes
        match = _BULLET_RE.match(raw.strip())
        if not match:
            continue
        text = re.sub(r"[*_`]", "", match.group("text")).strip().rstrip(".")
        label, sep, rest = text.partition(" : ")
        if not sep:
            label, sep, rest = text.partition(": ")
        if sep:
            facets = [f.strip() for f in re.split(r",|;", rest) if f.strip()]
        else:
            label, facets = text, []
        axes.append(_Axis(label=label.strip(), facets=facets, text=text))
    return axes


def _term_keys(terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Request term -> the stems that must all appear for a document to name it."""
    out: dict[str, tuple[str, ...]] = {}
    for term in terms:
        keys = tuple(dict.fromkeys(stem(w) for w in re.findall(r"[a-z0-9]+", fold(term)) if len(w) > 1))
        if keys:
            out[term] = keys
    return out


def _derive_terms(request_title: str, request: str) -> list[str]:
    """Fallback when request.md gives no ``terms``: capitalised words that do not start a sentence."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?:])\s+|\n", f"{request_title}\n{request}"):
        tokens = re.findall(r"[\wÀ-ÿ'-]+", sentence)
        for token in tokens[1:]:
            if len(token) >= 3 and token[0].isupper() and token[1:].islower() and token not in found:
                found.append(token)
    return found


def _idf(docs: Sequence[_Doc]) -> dict[str, float]:
    df = Counter(s for d in docs for s in set(d.stems))
    n = len(docs)
    return {s: math.log((n + 1) / (df[s] + 0.5)) for s in sorted(df)}


def _link(a: _Doc, b: _Doc, idf: dict[str, float]) -> tuple[int, float]:
    shared = sorted(a.vocab & b.vocab)
    return len(shared), sum(idf.get(s, 0.0) for s in shared)


class _Planner:
    def __init__(self, data: PlannerInput, framing_types: frozenset[str], tuning: PlannerTuning) -> None:
        self.data = data
        self.tuning = tuning
        self.framing_types = framing_types
        terms = list(data.terms) or _derive_terms(data.request_title, data.request)
        self.terms = terms
        self.term_keys = _term_keys(terms)
        self.term_stems = frozenset(s for keys in self.term_keys.values() for s in keys)
        self.axes = _parse_axes(data.request)
        self.docs = [self._doc(e) for e in data.catalogue]
        self.by_id = {d.id: d for d in self.docs}
        self.idf = _idf(self.docs)
        self._scores: dict[str, list[float]] = {}  # axis scores, filled by assign()

    # --- documents and relevance ------------------------------------------------------------

    def _doc(self, entry: CatalogueEntry) -> _Doc:
        text = (
            entry.title
            if not (self.data.with_summaries and entry.summary)
            else f"{entry.title} {entry.summary}"
        )
        st = stems(text)
        present = set(st)
        named = tuple(sorted(t for t, keys in self.term_keys.items() if all(k in present for k in keys)))
        return _Doc(entry=entry, stems=st, terms=named, vocab=frozenset(present - self.term_stems))

    def _request_weights(self) -> dict[str, float]:
        """Request vocabulary: axis and title words weigh 1, the rest of the request 0.5."""
        weights: dict[str, float] = {}
        bullets = " ".join(a.text for a in self.axes)
        for s in stems(self.data.request):
            weights[s] = 0.5
        for s in stems(f"{self.data.request_title} {bullets}"):
            weights[s] = 1.0
        for s in self.term_stems:
            weights.pop(s, None)
        return dict(sorted(weights.items()))

    def relevant(self) -> list[_Doc]:
        weights = self._request_weights()
        t = self.tuning
        own = {d.id: sum(weights.get(s, 0.0) for s in sorted(d.vocab)) for d in self.docs}
        kept: set[str] = set()
        for d in self.docs:
            names_term = bool(d.terms or not self.term_keys)
            if self.data.with_summaries and d.entry.summary:
                needed = t.strong_with_term if names_term else t.strong_without_term
            else:
                needed = t.title_only_with_term if names_term else t.title_only_without_term
            if own[d.id] >= needed:
                kept.add(d.id)
        # Community: a document naming a request term that shares rare words with another one naming
        # a term is about the same field (different products' price lists, say), even when the request
        # words it in other terms. A name clash (the term used in another sense) shares none.
        named = [d for d in self.docs if d.terms]
        for d in named:
            if d.id in kept:
                continue
            for other in named:
                if other is d:
                    continue
                n_shared, weight = _link(d, other, self.idf)
                if n_shared >= t.link_min_shared and weight >= t.link_min_weight:
                    kept.add(d.id)
                    break
        # Same-subject pull: a weakly relevant document joins when it shares a term and rare words
        # with a kept one (a follow-up, a denial, a fix). Repeated until nothing changes.
        changed = True
        while changed:
            changed = False
            for d in self.docs:
                if d.id in kept or (own[d.id] <= 0 and not d.terms):
                    continue
                for other_id in sorted(kept):
                    other = self.by_id[other_id]
                    if d.terms and not set(d.terms) & set(other.terms):
                        continue
                    n_shared, weight = _link(d, other, self.idf)
                    if n_shared >= t.link_min_shared and weight >= t.link_min_weight:
                        kept.add(d.id)
                        changed = True
                        break
        return [d for d in self.docs if d.id in kept]

    # --- same subject ----------------------------------------------------------------------

    def same_subject_pairs(self, docs: Sequence[_Doc]) -> list[tuple[float, str, str]]:
        """Pairs (similarity, id_a, id_b) about the same subject at different dates."""
        vectors = {d.id: weighted_vector(d.stems, self.idf) for d in docs}
        pairs: list[tuple[float, str, str]] = []
        for i, a in enumerate(docs):
            for b in docs[i + 1 :]:
                if a.entry.date == b.entry.date:
                    continue
                if self.term_keys and not set(a.terms) & set(b.terms):
                    continue
                n_shared, weight = _link(a, b, self.idf)
                if n_shared < self.tuning.link_min_shared or weight < self.tuning.link_min_weight:
                    continue
                sim = cosine(vectors[a.id], vectors[b.id])
                if sim >= self.tuning.same_subject_cosine:
                    pairs.append((sim, a.id, b.id))
        pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
        return pairs

    # --- axes ------------------------------------------------------------------------------

    def axis_scores(self, docs: Sequence[_Doc]) -> dict[str, list[float]]:
        """Overlap of each document with each axis. A word's weight is how specific it is to one
        axis (1.0 when only one axis uses it), x1.5 when it is in the axis label."""
        n = len(self.axes)
        axis_stems = [set(stems(a.text)) - self.term_stems for a in self.axes]
        label_stems = [set(stems(a.label)) - self.term_stems for a in self.axes]
        df = Counter(s for st in axis_stems for s in st)
        norm = math.log(1 + n) if n > 1 else 1.0
        scores: dict[str, list[float]] = {}
        for d in docs:
            row: list[float] = []
            for k, st in enumerate(axis_stems):
                total = 0.0
                for s in sorted(d.vocab & st):
                    weight = (math.log(1 + n / df[s]) / norm) if n > 1 else 1.0
                    total += weight * (1.5 if s in label_stems[k] else 1.0)
                row.append(round(total, 6))
            scores[d.id] = row
        return scores

    def assign(self, docs: Sequence[_Doc], pairs: Sequence[tuple[float, str, str]]) -> list[list[str]]:
        """Axis index -> document ids (a document may serve two axes)."""
        t = self.tuning
        n = len(self.axes)
        scores = self.axis_scores(docs)
        members: list[list[str]] = [[] for _ in range(n)]
        primary: dict[str, int] = {}
        unplaced: list[_Doc] = []
        for d in docs:
            row = scores[d.id]
            ranked = sorted(range(n), key=lambda k: (-row[k], k))
            if row[ranked[0]] <= 0:
                unplaced.append(d)
                continue
            primary[d.id] = ranked[0]
            members[ranked[0]].append(d.id)
            if n > 1:
                second = ranked[1]
                framing = fold(d.entry.source_type) in self.framing_types
                ratio = t.framing_ratio if framing else t.framing_ratio_other
                if row[second] >= max(t.framing_min_score, ratio * row[ranked[0]]):
                    members[second].append(d.id)
        # Documents that share no axis word: follow their same-subject partner, else the axis whose
        # documents they resemble most, else the smallest axis.
        vectors = {d.id: weighted_vector(d.stems, self.idf) for d in docs}
        pending = list(unplaced)
        while pending:
            progressed = False
            for d in list(pending):
                partner = next(
                    (
                        b if a == d.id else a
                        for _, a, b in pairs
                        if d.id in (a, b) and (b if a == d.id else a) in primary
                    ),
                    None,
                )
                if partner is not None:
                    primary[d.id] = primary[partner]
                    members[primary[d.id]].append(d.id)
                    pending.remove(d)
                    progressed = True
            if not progressed:
                break
        for d in pending:
            sims = []
            for k in range(n):
                centroid: dict[str, float] = {}
                for other in members[k]:
                    for key, value in vectors[other].items():
                        centroid[key] = centroid.get(key, 0.0) + value
                sims.append(cosine(vectors[d.id], centroid))
            if max(sims, default=0.0) > 0:
                k = sorted(range(n), key=lambda i: (-sims[i], i))[0]
            else:
                k = sorted(range(n), key=lambda i: (len(members[i]), i))[0]
            primary[d.id] = k
            members[k].append(d.id)
        # Same subject, different dates: a pair split across axes gets its weaker-fitting member
        # added to the partner's axis (adding, not moving: the other axis may need it too).
        for _, a, b in pairs:
            axes_a = {k for k in range(n) if a in members[k]}
            axes_b = {k for k in range(n) if b in members[k]}
            if axes_a & axes_b:
                continue
            options = []
            for doc_id, target in ((a, primary[b]), (b, primary[a])):
                row = scores[doc_id]
                best = max(row)
                loss = 0.0 if best <= 0 else 1.0 - row[target] / best
                options.append((loss, doc_id, target))
            _, doc_id, target = min(options)
            members[target].append(doc_id)
        self._scores = scores
        return members

    # --- capacity --------------------------------------------------------------------------

    def _units(self, ids: Sequence[str], pairs: Sequence[tuple[float, str, str]]) -> list[list[str]]:
        """Groups of same-subject documents among ``ids`` (strongest pairs first, capped)."""
        cap = self.data.max_docs
        group = {i: [i] for i in ids}
        for _, a, b in pairs:
            if a not in group or b not in group or group[a] is group[b]:
                continue
            if len(group[a]) + len(group[b]) > cap:
                continue
            merged = group[a] + group[b]
            for i in merged:
                group[i] = merged
        order = {i: k for k, i in enumerate(ids)}
        seen: list[list[str]] = []
        for i in ids:
            g = group[i]
            if not any(g is s for s in seen):
                seen.append(g)
        return [sorted(g, key=lambda i: order[i]) for g in seen]

    def split(
        self, ids: Sequence[str], pairs: Sequence[tuple[float, str, str]]
    ) -> tuple[list[str], list[str]]:
        """Two parts of ``ids``, same-subject groups kept together, most dissimilar groups apart."""
        cap = self.data.max_docs
        units = self._units(ids, pairs)
        if len(units) == 1:
            half = (len(ids) + 1) // 2
            return list(ids[:half]), list(ids[half:])
        vectors = {d.id: weighted_vector(d.stems, self.idf) for d in self.docs if d.id in set(ids)}

        def centroid(members: Sequence[str]) -> dict[str, float]:
            out: dict[str, float] = {}
            for m in members:
                for key, value in vectors[m].items():
                    out[key] = out.get(key, 0.0) + value
            return out

        unit_vecs = [centroid(u) for u in units]
        seed_pairs = sorted(
            (cosine(unit_vecs[i], unit_vecs[j]), i, j)
            for i in range(len(units))
            for j in range(i + 1, len(units))
        )
        _, i0, j0 = seed_pairs[0]
        parts: list[list[str]] = [list(units[i0]), list(units[j0])]
        rest = [k for k in range(len(units)) if k not in (i0, j0)]
        # Most decided units first: their place is clearest.
        rest.sort(
            key=lambda k: (
                -abs(cosine(unit_vecs[k], unit_vecs[i0]) - cosine(unit_vecs[k], unit_vecs[j0])),
                k,
            )
        )
        for k in rest:
            sims = [cosine(unit_vecs[k], centroid(p)) for p in parts]
            order = sorted(range(2), key=lambda p: (-sims[p], len(parts[p]), p))
            fitting = [p for p in order if len(parts[p]) + len(units[k]) <= cap]
            target = fitting[0] if fitting else min(range(2), key=lambda p: (len(parts[p]), p))
            parts[target].extend(units[k])
        position = {i: n for n, i in enumerate(ids)}
        return (sorted(parts[0], key=lambda i: position[i]), sorted(parts[1], key=lambda i: position[i]))

    def merge_axes(self, members: list[list[str]]) -> list[list[str]]:
        """More axes holding documents than ``max_subtasks``: the smallest axis joins the axis whose
        documents are most like its own (its label and facets join too), until they fit."""
        vectors = {d.id: weighted_vector(d.stems, self.idf) for d in self.docs}

        def centroid(ids: Sequence[str]) -> dict[str, float]:
            out: dict[str, float] = {}
            for i in ids:
                for key, value in vectors[i].items():
                    out[key] = out.get(key, 0.0) + value
            return out

        while sum(1 for m in members if m) > self.data.max_subtasks:
            live = [k for k, m in enumerate(members) if m]
            small = min(live, key=lambda k: (len(members[k]), -k))
            others = [k for k in live if k != small]
            target = max(others, key=lambda k: (cosine(centroid(members[small]), centroid(members[k])), -k))
            a, b = self.axes[target], self.axes[small]
            self.axes[target] = _Axis(
                label=f"{a.label} ; {b.label[:1].lower() + b.label[1:]}",
                facets=[*a.facets, *b.facets],
                text=f"{a.text} ; {b.text}",
                merged=True,
            )
            members[target] = list(dict.fromkeys([*members[target], *members[small]]))
            members[small] = []
        return members

    def fit_capacity(
        self, members: list[list[str]], pairs: Sequence[tuple[float, str, str]]
    ) -> list[tuple[int, list[str]]]:
        """(axis index, ids) sub-tasks within max_docs: split the most overfull axis while
        max_subtasks allows, then drop documents that another sub-task already covers, then move
        the least fitting ones to a sub-task with room. What still overflows is left for the plan
        validator (which truncates with an alert) rather than silently dropped here."""
        cap, budget = self.data.max_docs, self.data.max_subtasks
        tasks: list[tuple[int, list[str]]] = [(k, ids) for k, ids in enumerate(members) if ids]
        unsplittable: set[tuple[str, ...]] = set()
        while len(tasks) < budget:
            # Overflow of documents found in no other sub-task first: those would be lost.
            over = [
                (self._hard_overflow(n, tasks), len(ids) - cap, -n)
                for n, (_, ids) in enumerate(tasks)
                if len(ids) > cap and tuple(ids) not in unsplittable
            ]
            if not over:
                break
            n = -max(over)[2]
            axis, ids = tasks[n]
            first, second = self.split(ids, pairs)
            elsewhere = {i for m, (_, other) in enumerate(tasks) if m != n for i in other}
            if all(i in elsewhere for i in first) or all(i in elsewhere for i in second):
                # A part made only of documents another sub-task already has: not worth an analyst.
                unsplittable.add(tuple(ids))
                continue
            tasks[n : n + 1] = [(axis, first), (axis, second)]
        scores = self._scores

        def fit(doc_id: str, axis: int) -> float:
            row = scores.get(doc_id)
            return row[axis] if row else 0.0

        for n, (axis, ids) in enumerate(tasks):
            if len(ids) <= cap:
                continue
            for doc_id in sorted(ids, key=lambda i: (fit(i, axis), i)):
                if len(ids) <= cap:
                    break
                if any(doc_id in other for m, (_, other) in enumerate(tasks) if m != n):
                    ids.remove(doc_id)
            for doc_id in sorted(ids, key=lambda i: (fit(i, axis), i)):
                if len(ids) <= cap:
                    break
                room = [
                    (-fit(doc_id, a), m)
                    for m, (a, other) in enumerate(tasks)
                    if m != n and len(other) < cap and fit(doc_id, a) > 0
                ]
                if room:
                    _, m = min(room)
                    tasks[m][1].append(doc_id)
                    ids.remove(doc_id)
        return tasks

    def _hard_overflow(self, n: int, tasks: Sequence[tuple[int, list[str]]]) -> int:
        ids = tasks[n][1]
        elsewhere = {i for m, (_, other) in enumerate(tasks) if m != n for i in other}
        return max(0, sum(1 for i in ids if i not in elsewhere) - self.data.max_docs)

    # --- questions -------------------------------------------------------------------------

    def _context(self) -> str:
        title = self.data.request_title.strip().rstrip("?!. ").strip()
        return f"Dans le cadre de « {title} »" if title else "Dans le cadre de cette veille"

    def _terms_phrase(self, text: str) -> str:
        """' pour A, B et C' unless the question already names every term."""
        missing_terms = [t for t in self.terms if fold(t) not in fold(text)]
        if not self.terms or not missing_terms:
            return ""
        names = list(self.terms)
        joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " et " + names[-1]
        return f" pour {joined}"

    def question(self, axis: _Axis, facets: Sequence[str] | None) -> str:
        label = axis.label[:1].lower() + axis.label[1:] if not axis.label[1:2].isupper() else axis.label
        if facets is None and axis.merged:
            detail = ", ".join(axis.facets)
        elif facets is None:
            _, _, detail = axis.text.partition(":")
            detail = detail.strip()
        else:
            detail = ", ".join(facets)
        body = f"que disent les documents sur {label}" + (f" ({detail})" if detail else "")
        return f"{self._context()}, {body}{self._terms_phrase(body)} ?"

    def part_facets(self, axis: _Axis, parts: Sequence[Sequence[str]]) -> list[list[str]]:
        """Facets of a split axis, each given to the part whose documents it matches best."""
        out: list[list[str]] = [[] for _ in parts]
        vocab = [set().union(*(self.by_id[i].vocab for i in p)) if p else set() for p in parts]
        for facet in axis.facets:
            fs = set(stems(facet)) - self.term_stems
            aff = [sum(self.idf.get(s, 0.0) for s in sorted(fs & v)) for v in vocab]
            best = sorted(range(len(parts)), key=lambda k: (-aff[k], k))[0]
            if aff[best] > 0:
                out[best].append(facet)
        for k, p in enumerate(parts):
            if not out[k]:
                out[k] = self.top_words(p, exclude=[w for m, q in enumerate(parts) if m != k for w in q])
        return out

    def top_words(self, ids: Sequence[str], exclude: Sequence[str] = (), k: int = 3) -> list[str]:
        """The most specific words of a group of documents, in their most frequent surface form."""
        other = set().union(*(self.by_id[i].vocab for i in exclude)) if exclude else set()
        weight: dict[str, float] = {}
        surface: dict[str, Counter[str]] = {}
        for i in ids:
            entry = self.by_id[i].entry
            text = (
                entry.title
                if not (self.data.with_summaries and entry.summary)
                else f"{entry.title} {entry.summary}"
            )
            for token in re.findall(r"[A-Za-zÀ-ÿ0-9'-]+", text):
                for part in token.split("'"):
                    key = fold(part)
                    if len(key) < 3 or key.isdigit():
                        continue
                    s = stem(key)
                    if s in self.term_stems or not stems(part) or s in other:
                        continue
                    weight[s] = weight.get(s, 0.0) + self.idf.get(s, 0.0)
                    surface.setdefault(s, Counter())[part.lower()] += 1
        ranked = sorted(weight, key=lambda s: (-weight[s], s))[:k]
        return [sorted(surface[s].items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for s in ranked]

    # --- no bullet list: cluster the relevant documents ----------------------------------

    def cluster(self, docs: Sequence[_Doc], pairs: Sequence[tuple[float, str, str]]) -> list[list[str]]:
        cap, budget = self.data.max_docs, self.data.max_subtasks
        ids = [d.id for d in docs]
        target = min(budget, max(min(3, len(ids)), math.ceil(len(ids) / cap)))
        clusters = self._units(ids, pairs)
        vectors = {d.id: weighted_vector(d.stems, self.idf) for d in docs}

        def centroid(members: Sequence[str]) -> dict[str, float]:
            out: dict[str, float] = {}
            for m in members:
                for key, value in vectors[m].items():
                    out[key] = out.get(key, 0.0) + value
            return out

        while len(clusters) > target:
            cents = [centroid(c) for c in clusters]
            candidates = sorted(
                (-cosine(cents[i], cents[j]), i, j)
                for i in range(len(clusters))
                for j in range(i + 1, len(clusters))
                if len(clusters[i]) + len(clusters[j]) <= cap or len(clusters) > budget
            )
            if not candidates:
                break
            _, i, j = candidates[0]
            clusters[i] = clusters[i] + clusters[j]
            del clusters[j]
        position = {i: n for n, i in enumerate(ids)}
        return [sorted(c, key=lambda i: position[i]) for c in clusters]


def _date_order(planner: _Planner, ids: Sequence[str]) -> list[str]:
    unique = list(dict.fromkeys(ids))
    return sorted(unique, key=lambda i: (planner.by_id[i].entry.date, i))


def plan(
    data: PlannerInput,
    framing_types: frozenset[str] = frozenset(),
    tuning: PlannerTuning | None = None,
) -> Plan:
    """The offline plan for ``data`` (see the module docstring for the rules)."""
    planner = _Planner(data, frozenset(fold(t) for t in framing_types), tuning or PlannerTuning())
    kept = planner.relevant()
    kept_ids = {d.id for d in kept}
    excluded = [d.id for d in planner.docs if d.id not in kept_ids]
    if not kept:
        return Plan(sub_tasks=[], excluded=excluded)
    pairs = planner.same_subject_pairs(kept)
    sub_tasks: list[SubTask] = []
    if planner.axes:
        members = planner.merge_axes(planner.assign(kept, pairs))
        tasks = planner.fit_capacity(members, pairs)
        parts_of: dict[int, list[list[str]]] = {}
        for axis_index, ids in tasks:
            parts_of.setdefault(axis_index, []).append(ids)
        for axis_index in sorted(parts_of):
            axis = planner.axes[axis_index]
            parts = parts_of[axis_index]
            facets: list[list[str] | None] = (
                list(planner.part_facets(axis, parts)) if len(parts) > 1 else [None]
            )
            for ids, part_facets in zip(parts, facets, strict=True):
                sub_tasks.append(
                    SubTask(
                        id=f"st-{len(sub_tasks) + 1}",
                        question=planner.question(axis, part_facets),
                        doc_ids=_date_order(planner, ids),
                    )
                )
    else:
        for ids in planner.cluster(kept, pairs):
            words = planner.top_words(ids)
            cluster_axis = _Axis(
                label=", ".join(words[:-1]) + " et " + words[-1] if len(words) > 1 else "".join(words),
                facets=[],
                text="",
            )
            sub_tasks.append(
                SubTask(
                    id=f"st-{len(sub_tasks) + 1}",
                    question=planner.question(cluster_axis, None),
                    doc_ids=_date_order(planner, ids),
                )
            )
    return Plan(sub_tasks=sub_tasks, excluded=excluded)
