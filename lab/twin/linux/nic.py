"""A twin RoCE NIC (ConnectX class, mlx5 driver): its knobs as the host's tools see them, factory defaults as
NVIDIA ships them, and the refusals of the real tools.

Knobs and where they live on a real host:
  MTU                         `ip link set dev X mtu N` (1500 at boot; the mlx5 maximum is 9978)
  trust                       `dcb apptrust set dev X order ...` (mlx5 boots trusting PCP)
  DSCP -> priority            `dcb app add|replace|del|flush dev X dscp-prio D:P` (empty at boot)
  PFC                         `dcb pfc set dev X prio-pfc P:on|off` (all off at boot)
  ECN/DCQCN                   /sys/class/net/X/ecn/roce_rp|roce_np/enable/<prio> and the DCQCN parameters
                              (NVIDIA "DCQCN CC Parameters": enabled on every priority, the documented defaults)
  RDMA CM default ToS         /sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_tos, once `mkdir
                              /sys/kernel/config/rdma_cm/<dev>` created the device's group (ToS 0 before)
None of them survives a reboot or a driver reload: a rebooted twin server comes back with these defaults
(and runs its enabled boot units, which may set them again). A NIC of another driver ("generic") has no
ECN/DCQCN sysfs knobs at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RP_DEFAULTS = {"rpg_time_reset": 300, "rpg_byte_reset": 32767, "rpg_threshold": 1, "rpg_ai_rate": 5,
               "rpg_hai_rate": 50, "rpg_gd": 11, "rpg_min_dec_fac": 50, "rpg_min_rate": 1,
               "rate_to_set_on_first_cnp": 0, "dce_tcp_g": 1019, "dce_tcp_rtt": 1, "rate_reduce_monitor_period": 4,
               "initial_alpha_value": 1023, "clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1,
               "rpg_max_rate": 0}
RP_RANGES = {"rpg_time_reset": (1, 131071), "rpg_byte_reset": (1, 32767), "rpg_threshold": (1, 31),
             "rpg_ai_rate": (1, 400000), "rpg_hai_rate": (1, 400000), "rpg_gd": (1, 15), "rpg_min_dec_fac": (1, 100),
             "rpg_min_rate": (1, 400000), "rate_to_set_on_first_cnp": (0, 400000), "dce_tcp_g": (0, 1023),
             "dce_tcp_rtt": (1, 131071), "rate_reduce_monitor_period": (1, 1_000_000),
             "initial_alpha_value": (0, 1023), "clamp_tgt_rate": (0, 1), "clamp_tgt_rate_after_time_inc": (0, 1),
             "rpg_max_rate": (0, 400000)}
NP_DEFAULTS = {"min_time_between_cnps": 4, "cnp_dscp": 48, "cnp_802p_prio": 6}
NP_RANGES = {"min_time_between_cnps": (0, 4095), "cnp_dscp": (0, 63), "cnp_802p_prio": (0, 7)}
MAX_MTU, MIN_MTU = 9978, 68
TRUST_SELECTORS = {"pcp", "dscp"}          # what mlx5 accepts in an apptrust order


@dataclass
class Nic:
    name: str
    rdma: str
    port: int = 1
    driver: str = "mlx5"
    trust: list[str] = field(default_factory=lambda: ["pcp"])
    app: dict[int, int] = field(default_factory=dict)
    pfc: set[int] = field(default_factory=set)
    rp_enable: list[int] = field(default_factory=lambda: [1] * 8)
    np_enable: list[int] = field(default_factory=lambda: [1] * 8)
    rp: dict[str, int] = field(default_factory=lambda: dict(RP_DEFAULTS))
    np: dict[str, int] = field(default_factory=lambda: dict(NP_DEFAULTS))
    tos_group: bool = False                # the rdma_cm configfs group of the device exists
    tos: int = 0

    @property
    def dcqcn(self) -> set[int]:
        """Priorities on which the NIC both reacts to CNPs and sends them."""
        return {p for p in range(8) if self.rp_enable[p] and self.np_enable[p]}

    # ---------------------------------------------------------------- sysfs / configfs
    def ecn_dir(self) -> str:
        return f"/sys/class/net/{self.name}/ecn"

    def tos_path(self) -> str:
        return f"/sys/kernel/config/rdma_cm/{self.rdma}/ports/{self.port}/default_roce_tos"

    def files(self) -> dict[str, str]:
        """Every sysfs/configfs file of this NIC and its text (as `cat` prints it)."""
        out: dict[str, str] = {}
        if self.driver == "mlx5":
            base = self.ecn_dir()
            for p in range(8):
                out[f"{base}/roce_rp/enable/{p}"] = f"{self.rp_enable[p]}\n"
                out[f"{base}/roce_np/enable/{p}"] = f"{self.np_enable[p]}\n"
            out.update({f"{base}/roce_rp/{k}": f"{v}\n" for k, v in self.rp.items()})
            out.update({f"{base}/roce_np/{k}": f"{v}\n" for k, v in self.np.items()})
        if self.tos_group:
            out[self.tos_path()] = f"{self.tos}\n"
        return out

    def write(self, path: str, text: str) -> tuple[int, str] | None:
        """A write to one of this NIC's files: (status, error); None when the path is not this NIC's."""
        if path == self.tos_path():
            if not self.tos_group:
                return 1, f"bash: {path}: No such file or directory\n"
            return self._set_int(text, 0, 255, lambda v: setattr(self, "tos", v), path)
        base = self.ecn_dir() + "/"
        if not path.startswith(base):
            return None
        if self.driver != "mlx5":
            return 1, f"bash: {path}: No such file or directory\n"
        rest = path[len(base):].split("/")
        if len(rest) == 3 and rest[0] in ("roce_rp", "roce_np") and rest[1] == "enable" and rest[2] in "01234567" \
                and len(rest[2]) == 1:
            values = self.rp_enable if rest[0] == "roce_rp" else self.np_enable
            return self._set_int(text, 0, 1, lambda v: values.__setitem__(int(rest[2]), v), path)
        if len(rest) == 2 and rest[0] == "roce_rp" and rest[1] in RP_RANGES:
            lo, hi = RP_RANGES[rest[1]]
            return self._set_int(text, lo, hi, lambda v: self.rp.__setitem__(rest[1], v), path)
        if len(rest) == 2 and rest[0] == "roce_np" and rest[1] in NP_RANGES:
            lo, hi = NP_RANGES[rest[1]]
            return self._set_int(text, lo, hi, lambda v: self.np.__setitem__(rest[1], v), path)
        return 1, f"bash: {path}: No such file or directory\n"

    @staticmethod
    def _set_int(text: str, lo: int, hi: int, store, path: str) -> tuple[int, str]:
        value = text.strip()
        if not value.lstrip("-").isdigit() or not lo <= int(value) <= hi:
            return 1, "bash: echo: write error: Invalid argument\n"
        store(int(value))
        return 0, ""

    # ---------------------------------------------------------------- dcb
    def set_pfc(self, items: list[str]) -> tuple[int, str]:
        new = set(self.pfc)
        for item in items:
            prio, sep, onoff = item.partition(":")
            if not sep or onoff not in ("on", "off"):
                return 1, f"Error: Expected PRIO:on|off, got \"{item}\".\n"
            targets = range(8) if prio == "all" else [int(prio)] if prio.isdigit() and int(prio) < 8 else None
            if targets is None:
                return 1, f"Error: Invalid priority \"{prio}\" (0-7 or all).\n"
            for p in targets:
                (new.add if onoff == "on" else new.discard)(p)
        self.pfc = new
        return 0, ""

    def set_trust(self, order: list[str]) -> tuple[int, str]:
        bad = [s for s in order if s not in TRUST_SELECTORS]
        if not order or bad or len(set(order)) != len(order):
            return 1, f"Error: Invalid or unsupported trust order \"{' '.join(order)}\" (mlx5: pcp, dscp).\n"
        self.trust = list(order)
        return 0, ""

    def app_pairs(self, items: list[str]) -> tuple[dict[int, int] | None, str]:
        out: dict[int, int] = {}
        for item in items:
            dscp, sep, prio = item.partition(":")
            if not sep or not dscp.isdigit() or not prio.isdigit() or int(dscp) > 63 or int(prio) > 7:
                return None, f"Error: Invalid dscp-prio mapping \"{item}\" (DSCP 0-63 : priority 0-7).\n"
            out[int(dscp)] = int(prio)
        return out, ""
