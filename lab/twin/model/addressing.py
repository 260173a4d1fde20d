"""Addressing: who owns which address, connected subnets of up interfaces."""

from __future__ import annotations

import functools
import ipaddress

from nr_run.lab.twin.model.core import Port
from nr_run.lab.twin.model.links import Links


@functools.lru_cache(maxsize=65536)
def _iface(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    """Parsed interface addresses (the same few thousand strings are parsed again on every change)."""
    return ipaddress.ip_interface(text)


@functools.lru_cache(maxsize=65536)
def _addr_int(text: str) -> int:
    return int(ipaddress.ip_address(text))



class Addressing(Links):
    def owners(self) -> dict[str, Port]:
        """IPv4 address -> (device, interface) for every configured interface and loopback."""
        def build() -> dict[str, Port]:
            own: dict[str, Port] = {}
            for dev, st in sorted(self.states.items()):
                for name, pfx in st.loopbacks.items():
                    own.setdefault(pfx.split("/")[0], (dev, name))
                for name, ifs in st.interfaces.items():
                    if ifs.ipv4:
                        own.setdefault(ifs.ipv4.split("/")[0], (dev, name))
            return own
        return self._cached("owners", build)

    def connected(self, dev: str) -> dict[str, str]:
        """Connected prefixes of an up interface or loopback: prefix -> interface (read-only, cached)."""
        def build() -> dict[str, str]:
            st = self.states.get(dev)
            out: dict[str, str] = {}
            if not st:
                return out
            for name, pfx in st.loopbacks.items():
                out.setdefault(str(_iface(pfx).network), name)
            for name, ifs in sorted(st.interfaces.items()):
                if ifs.ipv4 and self.link_up(dev, name):
                    out.setdefault(str(_iface(ifs.ipv4).network), name)
            return out
        return self._cached(f"conn:{dev}", build)

    def _up_subnets(self, dev: str) -> list[tuple[int, int, str]]:
        """(network, netmask, interface) of dev's up, addressed interfaces, in interface-name order."""
        def build() -> list[tuple[int, int, str]]:
            st = self.states.get(dev)
            out = []
            for name, ifs in sorted(st.interfaces.items()) if st else ():
                if ifs.ipv4 and self.link_up(dev, name):
                    net = _iface(ifs.ipv4).network
                    out.append((int(net.network_address), int(net.netmask), name))
            return out
        return self._cached(f"subnets:{dev}", build)

    def _local_if_for(self, dev: str, ip: str) -> str | None:
        """The up interface of `dev` whose connected subnet contains `ip`."""
        addr = _addr_int(ip)
        return next((name for net, mask, name in self._up_subnets(dev) if addr & mask == net), None)

