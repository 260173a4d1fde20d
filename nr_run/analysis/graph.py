"""The fabric as a graph: switches, fabric links (speeds, ports), GPU NICs on their rails.

One model shared by the routing, deadlock, ECMP and capacity analyses. Indexing is by switch name and link
id (position in `links`), and every collection is sorted, so results are deterministic.

Symmetry: two switches are *twins* when they have the same colour (role, ASN group, ECMP width, hosts) and
the same multiset of (neighbour, link speed). Swapping two twins is an automorphism of the graph (they are
not adjacent, since each would list the other as a neighbour), so the transpositions of twins generate a
group that acts as the full symmetric group on every twin class. Analyses use it to evaluate one
representative per class (of destinations, of failure sets) and to carry the result to the other members.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import permutations

from nr_run.intent.models import FabricIntent

# tiers bottom-up: a hop "up" goes to a higher tier; valley-free paths go up, then only down
TIERS = {"rtsw": 1, "ctsw": 2, "atsw": 3}


@dataclass(frozen=True)
class Switch:
    name: str
    role: str
    tier: int
    asn: int
    router_id: str
    platform: str
    maximum_paths: int
    lossless: tuple[int, ...]             # lossless priorities of the switch's profile
    prefixes: tuple[str, ...]             # what it originates into BGP: host block, loopback
    host_block: str | None
    host_mbps: int                        # summed speed of its host (GPU NIC) links


@dataclass(frozen=True)
class FabricLink:
    id: int
    a: str
    a_port: str
    b: str
    b_port: str
    speed_mbps: int

    def peer(self, switch: str) -> str:
        return self.b if switch == self.a else self.a

    def port(self, switch: str) -> str:
        return self.a_port if switch == self.a else self.b_port


@dataclass(frozen=True)
class NicEnd:
    """A GPU NIC and the RTSW port it is cabled to (its rail)."""

    server: str
    nic: str
    ip: str
    rail: int
    switch: str
    port: str
    speed_mbps: int


def natural_key(name: str) -> tuple[object, ...]:
    """Sort key putting rtsw2 before rtsw10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


# a failure element: ("switch", name) or ("link", link id); a failure set is a frozenset of them
Element = tuple[str, str | int]
FailureSet = frozenset[Element]


@dataclass(frozen=True)
class Failed:
    switches: frozenset[str] = frozenset()
    links: frozenset[int] = frozenset()

    @classmethod
    def of(cls, failures: Iterable[Element]) -> Failed:
        sw = frozenset(str(v) for k, v in failures if k == "switch")
        ln = frozenset(int(v) for k, v in failures if k == "link")
        return cls(sw, ln)


NO_FAILURES = Failed()


@dataclass
class FabricGraph:
    switches: dict[str, Switch]
    links: list[FabricLink]
    nics: list[NicEnd]
    adj: dict[str, list[tuple[int, str]]] = field(default_factory=dict)   # switch -> [(link id, peer)]
    rid: dict[str, int] = field(default_factory=dict)                     # router ID as a number (tie-break)
    memo: dict[str, dict[object, object]] = field(default_factory=dict, repr=False, compare=False)  # derived views

    @classmethod
    def from_intent(cls, fabric: FabricIntent) -> FabricGraph:
        switches: dict[str, Switch] = {}
        nics: list[NicEnd] = []
        for dev in sorted(fabric.switches(), key=lambda d: d.name):
            host_mbps = sum(i.speed_mbps for i in dev.interfaces if i.role == "host")
            prefixes = tuple(p for p in (dev.host_block, dev.loopback) if p)
            switches[dev.name] = Switch(
                name=dev.name, role=dev.role, tier=dev.tier or TIERS.get(dev.role, 1), asn=dev.asn or 0,
                router_id=dev.router_id or "0.0.0.0", platform=dev.platform,
                maximum_paths=dev.bgp.maximum_paths if dev.bgp else 1,
                lossless=tuple(dev.roce.lossless_priorities), prefixes=prefixes, host_block=dev.host_block,
                host_mbps=host_mbps)
        links: list[FabricLink] = []
        for lk in fabric.links:
            if lk.role != "fabric" or lk.a_device not in switches or lk.b_device not in switches:
                continue
            links.append(FabricLink(len(links), lk.a_device, lk.a_port, lk.b_device, lk.b_port, lk.speed_mbps))
        for server in sorted(fabric.servers(), key=lambda d: d.name):
            for nic in server.nics:
                if nic.peer_device in switches:
                    nics.append(NicEnd(server.name, nic.name, nic.ip, nic.rail, nic.peer_device, nic.peer_port,
                                       nic.speed_mbps))
        graph = cls(switches, links, nics)
        graph.rid = {n: int(ipaddress.IPv4Address(s.router_id)) for n, s in switches.items()}
        graph.adj = {name: [] for name in switches}
        for fl in links:
            graph.adj[fl.a].append((fl.id, fl.b))
            graph.adj[fl.b].append((fl.id, fl.a))
        for name, entries in graph.adj.items():
            entries.sort(key=lambda e: (e[1], graph.links[e[0]].port(name)))
        return graph

    @classmethod
    def of(cls, fabric: FabricIntent) -> FabricGraph:
        """from_intent, remembered for the most recent fabric (the intent is immutable): the analyses of one run
        and the safety preflight share one graph."""
        global _LAST
        if _LAST is None or _LAST[0] is not fabric:
            _LAST = (fabric, cls.from_intent(fabric))
        return _LAST[1]

    @cached_property
    def rails(self) -> dict[int, list[NicEnd]]:
        """NICs per rail, servers in natural order."""
        rails: dict[int, list[NicEnd]] = defaultdict(list)
        for nic in self.nics:
            rails[nic.rail].append(nic)
        return {r: sorted(rails[r], key=lambda n: natural_key(n.server)) for r in sorted(rails)}

    @cached_property
    def link_ends(self) -> list[tuple[str, str]]:
        """Link id -> its (a, b) switches, for walks that find a link's far end many times."""
        return [(lk.a, lk.b) for lk in self.links]

    # ---- views under failures ------------------------------------------------------------------------

    def alive_adj(self, failed: Failed) -> dict[str, list[tuple[int, str]]]:
        """Adjacency without failed switches and links (lists shared with `adj` when untouched)."""
        if not failed.switches and not failed.links:
            return self.adj
        out: dict[str, list[tuple[int, str]]] = {}
        for name, entries in self.adj.items():
            if name in failed.switches:
                continue
            out[name] = [(lid, peer) for lid, peer in entries
                         if lid not in failed.links and peer not in failed.switches]
        return out

    def shared_asns(self) -> frozenset[int]:
        """ASNs held by more than one switch (a CTSW tier sharing one ASN)."""
        count = Counter(s.asn for s in self.switches.values())
        return frozenset(a for a, n in count.items() if n > 1)

    def twin_classes(self, failed: Failed = NO_FAILURES, fixed: Iterable[str] = ()) -> list[list[str]]:
        """Twin classes of the graph without `failed` (sorted lists, sorted by first member); `fixed`
        switches each stay alone (e.g. switches that have extra routes)."""
        adj = self.alive_adj(failed)
        pinned = set(fixed)
        shared = self.shared_asns()
        groups: dict[tuple[object, ...], list[str]] = {}
        for name in sorted(adj):
            if name in pinned:
                groups[("pinned", name)] = [name]
                continue
            sw = self.switches[name]
            asn_key: object = sw.asn if sw.asn in shared else "unique"
            colour = (sw.role, asn_key, sw.maximum_paths, sw.lossless, sw.host_mbps, sw.host_block is not None)
            nbrs = tuple(sorted(Counter((peer, self.links[lid].speed_mbps) for lid, peer in adj[name]).items()))
            groups.setdefault((colour, nbrs), []).append(name)
        return sorted(groups.values(), key=lambda g: g[0])

    # ---- failure sets up to symmetry -----------------------------------------------------------------

    def failure_elements(self) -> int:
        return len(self.switches) + len(self.links)

    def failure_reps(self, k_max: int, fixed: Iterable[str] = ()) -> list[FailureSet]:
        """One failure set of each orbit under the twin group, of every size 0..k_max (fabric links and
        switches; host links are left out: they cut one NIC and change no route).

        Orbit k is grown from the representatives of size k-1: an orbit of size k holds a set F | {x} with
        F a representative, and permuting the switches F does not touch (the stabiliser of F) can move x
        onto switches that F touches or onto the first untouched switch of each class; so only those
        extensions are tried, then deduplicated by a canonical form.
        """
        classes = self.twin_classes(fixed=fixed)
        cls_of = {n: i for i, members in enumerate(classes) for n in members}
        reps: list[FailureSet] = [frozenset()]
        level: list[FailureSet] = [frozenset()]
        for _k in range(k_max):
            found: dict[str, FailureSet] = {}
            for base in level:
                failed = Failed.of(base)
                touched = self._touched(base)
                cand_nodes = set(touched)
                for members in classes:
                    for n in members:
                        if n not in touched:
                            cand_nodes.add(n)
                            break
                extensions: list[Element] = []
                for n in sorted(cand_nodes):
                    if n not in failed.switches:
                        extensions.append(("switch", n))
                    for lid, peer in self.adj[n]:
                        if peer in cand_nodes and n < peer and lid not in failed.links \
                                and n not in failed.switches and peer not in failed.switches:
                            extensions.append(("link", lid))
                for x in extensions:
                    if x in base:
                        continue
                    new = base | {x}
                    if self._redundant(new):
                        continue
                    key = self._canonical(new, cls_of)
                    if key not in found:
                        found[key] = new
            level = [found[k] for k in sorted(found)]
            reps += level
        return reps

    def orbit_size(self, failures: FailureSet) -> int | None:
        """How many failure sets a representative of size <= 1 stands for (None for larger sets)."""
        if not failures:
            return 1
        if len(failures) > 1:
            return None
        classes = self.twin_classes()
        size = {n: len(members) for members in classes for n in members}
        ((kind, v),) = failures
        if kind == "switch":
            return size[str(v)]
        lk = self.links[int(v)]
        parallel = sum(1 for lid, peer in self.adj[lk.a]
                       if peer == lk.b and self.links[lid].speed_mbps == lk.speed_mbps)
        return size[lk.a] * size[lk.b] * parallel

    def _touched(self, failures: FailureSet) -> set[str]:
        out: set[str] = set()
        for kind, v in failures:
            if kind == "switch":
                out.add(str(v))
            else:
                lk = self.links[int(v)]
                out.update((lk.a, lk.b))
        return out

    def _redundant(self, failures: FailureSet) -> bool:
        """A link of a failed switch adds nothing: the set equals a smaller one."""
        dead = {str(v) for k, v in failures if k == "switch"}
        return any(k == "link" and (self.links[int(v)].a in dead or self.links[int(v)].b in dead)
                   for k, v in failures)

    def _canonical(self, failures: FailureSet, cls_of: dict[str, int]) -> str:
        """The same key for every set of one orbit: switches renamed to (class, order of first appearance),
        minimised over the orders of the elements (at most 3! of them)."""
        best: str | None = None
        for order in permutations(sorted(failures, key=repr)):
            seen: dict[str, tuple[int, int]] = {}
            count: Counter[int] = Counter()

            def label(n: str, seen: dict[str, tuple[int, int]] = seen, count: Counter[int] = count
                      ) -> tuple[int, int]:
                if n not in seen:
                    c = cls_of[n]
                    seen[n] = (c, count[c])
                    count[c] += 1
                return seen[n]

            items: list[object] = []
            for kind, v in order:
                if kind == "switch":
                    items.append(("s", label(str(v))))
                else:
                    lk = self.links[int(v)]
                    ends = sorted((label(lk.a), label(lk.b)))
                    items.append(("l", tuple(ends), lk.speed_mbps))
            key = repr(items)
            if best is None or key < best:
                best = key
        return best or ""

    def swap_failures(self, failures: FailureSet, a: str, b: str) -> FailureSet:
        """The image of `failures` under the swap of twins `a` and `b` (parallel links keep their order)."""
        if a == b:
            return failures

        def sw(n: str) -> str:
            return b if n == a else a if n == b else n

        out: set[Element] = set()
        for kind, v in failures:
            if kind == "switch":
                out.add(("switch", sw(str(v))))
                continue
            lk = self.links[int(v)]
            old = [lid for lid, peer in self.adj[lk.a] if peer == lk.b]
            new = [lid for lid, peer in self.adj[sw(lk.a)] if peer == sw(lk.b)]
            out.add(("link", new[old.index(lk.id)]))
        return frozenset(out)

    def describe(self, failures: FailureSet) -> str:
        """'none' or e.g. 'link rtsw1:Ethernet1-ctsw1:Ethernet1, switch ctsw2'."""
        if not failures:
            return "none"
        parts = []
        for kind, v in sorted(failures, key=repr):
            if kind == "switch":
                parts.append(f"switch {v}")
            else:
                lk = self.links[int(v)]
                parts.append(f"link {lk.a}:{lk.a_port}-{lk.b}:{lk.b_port}")
        return ", ".join(parts)

    def topology(self, highlight: Iterable[tuple[str, str]] = (), only: Iterable[str] | None = None
                 ) -> dict[str, object]:
        """Figure data for a topology plot: nodes with a tier, switch-level edges, highlighted edges."""
        keep = set(only) if only is not None else set(self.switches)
        nodes = [{"name": n, "tier": self.switches[n].role} for n in sorted(keep)]
        edges = sorted({tuple(sorted((lk.a, lk.b))) for lk in self.links if lk.a in keep and lk.b in keep})
        marked = sorted({tuple(sorted(e)) for e in highlight})
        return {"nodes": nodes, "edges": [list(e) for e in edges], "highlight": [list(e) for e in marked]}


_LAST: tuple[FabricIntent, FabricGraph] | None = None
