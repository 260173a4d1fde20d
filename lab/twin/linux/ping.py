"""`ping` with iputils output, resolved by the fabric (path, MTU with DF, reachability)."""

from __future__ import annotations

import ipaddress

from nr_run.lab.twin.fabric import Fabric


def ping(fabric: Fabric, dev: str, args: list[str], nic_addr: dict[str, str] | None = None) -> tuple[int, str, str]:
    count, size, df, tos, src, dst = 3, 56, False, 0, None, None
    it = iter(args)
    for a in it:
        if a == "-c":
            count = int(next(it, "3"))
        elif a == "-s":
            size = int(next(it, "56"))
        elif a == "-M":
            df = next(it, "") == "do"
        elif a == "-Q":
            tos = int(next(it, "0"), 0)
        elif a == "-I":
            src = next(it, None)
        elif a in ("-W", "-i", "-w", "-t"):
            next(it, None)
        elif not a.startswith("-"):
            dst = a
    if dst is None:
        return 2, "", "ping: usage error: Destination address required\n"
    try:
        ipaddress.ip_address(dst)
    except ValueError:
        return 2, "", f"ping: {dst}: Name or service not known\n"
    if src and nic_addr and src in nic_addr:
        src = nic_addr[src]
    res = fabric.ping(dev, dst, size=size, df=df, count=count, src_ip=src, tos=tos)
    head = f"PING {dst} ({dst}) {f'from {res.source} ' if res.source else ''}{size}({size + 28}) bytes of data.\n"
    if res.error and res.source is None:
        return 2, "", "ping: connect: Network is unreachable\n"
    lines = [head]
    if "MTU" in res.error and df:
        lines.append(f"ping: local error: message too long, mtu={res.error.split('MTU ')[1].split()[0]}\n" * count)
    for seq in range(1, res.received + 1):
        lines.append(f"{size + 8} bytes from {dst}: icmp_seq={seq} ttl={64 - max(0, len(res.path) - 1)} time=0.{100 + seq} ms\n")
    loss = int(round(100 * (res.transmitted - res.received) / max(1, res.transmitted)))
    lines.append(f"\n--- {dst} ping statistics ---\n{res.transmitted} packets transmitted, {res.received} received, "
                 f"{'+' + str(res.transmitted) + ' errors, ' if res.error else ''}{loss}% packet loss, time {count * 1000 - 1000}ms\n")
    if res.received:
        lines.append("rtt min/avg/max/mdev = 0.101/0.102/0.103/0.001 ms\n")
    return (0 if res.received else 1), "".join(lines), ""
