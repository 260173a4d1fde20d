"""The physical layer: cables (after swap faults), link state, LLDP, link flap history."""

from __future__ import annotations

from dataclasses import dataclass

from nr_run.lab.twin.model.core import FabricCore, Port


@dataclass(frozen=True)
class LldpNeighbor:
    port: str               # local port
    device: str             # neighbor node name
    hostname: str           # neighbor's configured hostname (systemName)
    neighbor_port: str      # the port ID the neighbor sends (its interface name, or SONiC's PORT alias)
    neighbor_port_descr: str = ""
    port_id_subtype: str = "ifname"     # LLDP port ID subtype: ifname (interface name) | local (locally assigned)
    chassis_mac: str = ""               # the neighbor's system MAC (its LLDP chassis ID)



class Links(FabricCore):
    def record_traffic(self, crossed: list[tuple[Port, Port, int]], packets: int) -> None:
        """`packets` packets crossed each (egress, ingress, bytes per packet) cable: the ports' counters move."""
        for egress, ingress, size in crossed:
            out = self._traffic.setdefault(egress, [0, 0, 0, 0])
            out[2] += packets * size
            out[3] += packets
            into = self._traffic.setdefault(ingress, [0, 0, 0, 0])
            into[0] += packets * size
            into[1] += packets

    def traffic(self, dev: str, port: str) -> tuple[int, int, int, int]:
        """(in octets, in packets, out octets, out packets) of a port: what pings and RDMA tests sent through it."""
        c = self._traffic.get((dev, port), [0, 0, 0, 0])
        return c[0], c[1], c[2], c[3]

    def clear_traffic(self) -> None:
        """A lab reset: every device boots with zero counters."""
        self._traffic.clear()

    def cabling(self) -> dict[Port, Port]:
        """(dev, port) -> far end, after cable-swap faults."""
        def build() -> dict[Port, Port]:
            far: dict[Port, Port] = {}
            for cable in self.topology.links:
                far[(cable.a_dev, cable.a_port)] = (cable.b_dev, cable.b_port)
                far[(cable.b_dev, cable.b_port)] = (cable.a_dev, cable.a_port)
            for f in self.faults.of("cable_swap"):
                a = (str(f.params["device_a"]), str(f.params["port_a"]))
                c = (str(f.params["device_b"]), str(f.params["port_b"]))
                if a in far and c in far:
                    b, d = far[a], far[c]
                    far[a], far[d] = d, a
                    far[c], far[b] = b, c
            return far
        return self._cached("cabling", build)

    def peer(self, dev: str, port: str) -> Port | None:
        return self.cabling().get((dev, port))

    def reachable(self, dev: str) -> bool:
        """Whether dev answers. Every request (eAPI, SSH, gNMI) starts here, so the inputs are synced first."""
        self.sync()
        return not self.faults.is_unreachable(dev)

    def _port_admin_up(self, dev: str, port: str) -> bool:
        st = self.states.get(dev)
        ifs = st.interfaces.get(port) if st else None
        return bool(ifs and ifs.admin_up)

    def link_up(self, dev: str, port: str) -> bool:
        """Both ends admin up, cabled, no link-down fault on either end (an unreachable management plane does
        not touch the data plane: its links stay up and keep forwarding)."""
        far = self.peer(dev, port)
        if far is None:
            return False
        pdev, pport = far
        return (self._port_admin_up(dev, port) and self._port_admin_up(pdev, pport)
                and not self.faults.is_link_down(dev, port) and not self.faults.is_link_down(pdev, pport))

    def lldp_neighbors(self, dev: str) -> list[LldpNeighbor]:
        out = []
        node = self.topology.nodes.get(dev)
        for port in node.ports if node else ():
            far = self.peer(dev, port)
            if far and self.link_up(dev, port):
                st = self.states.get(far[0])
                ifs = st.interfaces.get(far[1]) if st else None
                port_id = ifs.lldp_port_id if ifs and ifs.lldp_port_id else far[1]
                descr = ifs.description if ifs else ""
                subtype = "local" if ifs and ifs.lldp_port_id else "ifname"
                out.append(LldpNeighbor(port, far[0], st.hostname if st else far[0], port_id, descr, subtype,
                                        st.system_mac if st else ""))
        return out

    def link_times(self, dev: str, port: str) -> tuple[float | None, float | None]:
        """(last went down, last came back up) by link-down faults on either end; None where it never did."""
        far = self.peer(dev, port)
        faults = [f for d, p in [(dev, port)] + ([far] if far else [])
                  for f in self.faults.counted("link_down", device=d, port=p)]
        downs = [f.since for f in faults]
        ups = [f.until for f in faults if f.until is not None and f not in self.faults.items]
        return (max(downs) if downs else None), (max(ups) if ups else None)

    def link_changes(self, dev: str, port: str) -> int:
        """Link status changes of a port since boot: the first link up, then a down and an up for every
        link-down fault on either end that was cleared, a down for one still on."""
        far = self.peer(dev, port)
        ends = [(dev, port)] + ([far] if far else [])
        changes = 1
        for d, p in ends:
            changes += 2 * sum(1 for f in self.faults.ended if f.matches("link_down", device=d, port=p))
            changes += sum(1 for f in self.faults.of("link_down", device=d, port=p))
        return changes


