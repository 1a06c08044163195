"""Grouping a library's mangas into series: which series to merge and which pairs to suggest (pure planning).

Input is blocks: the mangas sharing one match key (catalog.series_matching),
read from the indexed `MangaMatchKey` table by `catalog.series_candidates`.
Only pairs within a block are compared, and only pairs in different series.

Merges are transitive (A=B and B=C make one series) but never across a
conflict: when some manga of one group is a title collision with some manga
of the other (same title, different authors), the two groups stay apart and
the pair becomes a suggestion instead of a merge. A pair an operator
rejected is neither merged nor suggested again.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from catalog.series_matching import Candidate, Decision, decide

# A key shared by more mangas than this says nothing about any two of them: a placeholder cover every
# coverless manga shows, a generic title ("Love", "Revenge"). Such blocks are skipped and reported.
MAX_BLOCK = 50


@dataclass(frozen=True)
class MangaFacts:
    id: uuid.UUID
    series_id: uuid.UUID
    series_created: dt.datetime
    title: str
    source_id: str
    candidate: Candidate


@dataclass(frozen=True)
class PlannedMerge:
    target: uuid.UUID  # the oldest series of the group keeps its id
    others: tuple[uuid.UUID, ...]
    titles: tuple[str, ...]  # "source: title" of every manga compared, for the dry run
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class PlannedSuggestion:
    first: uuid.UUID
    second: uuid.UUID
    titles: tuple[str, str]
    reasons: tuple[str, ...]


@dataclass
class Plan:
    merges: list[PlannedMerge] = field(default_factory=list)
    suggestions: list[PlannedSuggestion] = field(default_factory=list)
    skipped_blocks: list[tuple[str, int]] = field(default_factory=list)
    compared: int = 0


def pair(first: uuid.UUID, second: uuid.UUID) -> tuple[uuid.UUID, uuid.UUID]:
    """A pair of series ids in the one order suggestions are stored in."""
    return (first, second) if str(first) < str(second) else (second, first)


class _Groups:
    """Union-find over series ids, remembering each group's members and which series conflict."""

    def __init__(self) -> None:
        self.parent: dict[uuid.UUID, uuid.UUID] = {}
        self.members: dict[uuid.UUID, set[uuid.UUID]] = {}
        self.conflicts: set[tuple[uuid.UUID, uuid.UUID]] = set()

    def find(self, node: uuid.UUID) -> uuid.UUID:
        if node not in self.parent:
            self.parent[node], self.members[node] = node, {node}
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def in_conflict(self, first: uuid.UUID, second: uuid.UUID) -> bool:
        group_a, group_b = self.members[self.find(first)], self.members[self.find(second)]
        return any(pair(x, y) in self.conflicts for x in group_a for y in group_b)

    def union(self, first: uuid.UUID, second: uuid.UUID) -> None:
        root_a, root_b = self.find(first), self.find(second)
        if root_a != root_b:
            self.parent[root_b] = root_a
            self.members[root_a] |= self.members.pop(root_b)


def plan_grouping(
    blocks: Iterable[tuple[str, Sequence[MangaFacts]]], rejected: set[tuple[uuid.UUID, uuid.UUID]] = frozenset()
) -> Plan:
    """Which series to merge and which pairs to suggest, from the blocks of mangas sharing a key."""
    plan = Plan()
    verdicts: dict[tuple[uuid.UUID, uuid.UUID], tuple[MangaFacts, MangaFacts, Decision, tuple[str, ...], bool]] = {}
    for key, members in blocks:
        if len({m.series_id for m in members}) < 2:
            continue
        if len(members) > MAX_BLOCK:
            plan.skipped_blocks.append((key, len(members)))
            continue
        for index, first in enumerate(members):
            for second in members[index + 1 :]:
                if first.series_id == second.series_id or pair(first.id, second.id) in verdicts:
                    continue
                if first.source_id == second.source_id:
                    # One site lists a series once: two of its mangas alike are two series (a title collision),
                    # and no merge through a third manga may join them.
                    verdicts[pair(first.id, second.id)] = (first, second, Decision.NONE, (), True)
                    continue
                verdict = decide(first.candidate, second.candidate)
                plan.compared += 1
                verdicts[pair(first.id, second.id)] = (
                    first,
                    second,
                    verdict.decision,
                    verdict.reasons,
                    verdict.conflict,
                )
    groups = _Groups()
    series_created: dict[uuid.UUID, dt.datetime] = {}
    titles: dict[uuid.UUID, list[str]] = {}
    for first, second, _, _, conflict in verdicts.values():
        for facts in (first, second):
            groups.find(facts.series_id)
            series_created[facts.series_id] = facts.series_created
            label = f"{facts.source_id}: {facts.title}"
            if label not in titles.setdefault(facts.series_id, []):
                titles[facts.series_id].append(label)
        if conflict:
            groups.conflicts.add(pair(first.series_id, second.series_id))
    reasons: dict[uuid.UUID, list[str]] = {}
    weak: list[tuple[MangaFacts, MangaFacts, tuple[str, ...]]] = []
    for _, (first, second, decision, why, _) in sorted(verdicts.items(), key=lambda item: tuple(map(str, item[0]))):
        series_pair = pair(first.series_id, second.series_id)
        if series_pair in rejected:
            continue
        if decision is Decision.MERGE and not groups.in_conflict(first.series_id, second.series_id):
            groups.union(first.series_id, second.series_id)
            reasons.setdefault(first.series_id, []).append(f"{first.title} = {second.title}: {'; '.join(why)}")
        elif decision is not Decision.NONE:
            weak.append((first, second, why))
    target_of: dict[uuid.UUID, uuid.UUID] = {}
    for root, group in groups.members.items():
        ordered = sorted(group, key=lambda s: (series_created[s], str(s)))
        target_of[root] = ordered[0]
        if len(group) < 2:
            continue
        plan.merges.append(
            PlannedMerge(
                target=ordered[0],
                others=tuple(ordered[1:]),
                titles=tuple(t for s in ordered for t in titles[s]),
                reasons=tuple(r for s in ordered for r in reasons.get(s, [])),
            )
        )
    suggested: set[tuple[uuid.UUID, uuid.UUID]] = set()
    for first, second, why in weak:
        if groups.find(first.series_id) == groups.find(second.series_id):
            continue  # merged through a third manga after all
        key = pair(target_of[groups.find(first.series_id)], target_of[groups.find(second.series_id)])
        if key in suggested or key in rejected:
            continue
        suggested.add(key)
        plan.suggestions.append(
            PlannedSuggestion(
                first=key[0],
                second=key[1],
                titles=tuple(sorted((f"{first.source_id}: {first.title}", f"{second.source_id}: {second.title}"))),  # type: ignore[arg-type]
                reasons=why,
            )
        )
    plan.merges.sort(key=lambda m: m.titles)
    plan.suggestions.sort(key=lambda s: s.titles)
    return plan
