"""ECN marks on SONiC read as an operator reads them (`show queue wredcounters` over SSH, via `nr-run check`):
observed under congestion, and a failure, never a pass, when the switch cannot report them."""

from __future__ import annotations

import json

from nr_run.platforms.sonic.collect import parse_counters
from tests.twin_site import run_json, ssh_run

PORT = "Ethernet16"          # rtsw3's first host port; queue 3 is the RoCE queue with ECN


def _ecn(report: dict, device: str) -> dict:
    return next(f for f in report["findings"] if f["check"] == "counters" and f["device"] == device
                and f["target"] == f"{PORT} queue 3 ecn marks")


def test_congestion_marks_are_reported_and_unpolled_counters_fail(deployed_twin, capsys):
    deployed_twin.fault("congestion", device="rtsw3", port=PORT, queue=3)
    rc, report = run_json(deployed_twin, capsys, "check", "--checks", "counters")
    finding = _ecn(report, "rtsw3")
    assert finding["passed"] and finding["observed"].endswith("s") and int(finding["observed"].split()[0]) > 0

    # polling off (counterpoll wredqueue disable, here as a GCU patch): the counters read N/A
    client = deployed_twin.ssh("rtsw3", password="YourPaSsWoRd")
    try:
        stdin, out, _ = client.exec_command("cat > /tmp/off.json-patch")
        stdin.write(json.dumps([{"op": "replace", "path": "/FLEX_COUNTER_TABLE/WRED_ECN_QUEUE/FLEX_COUNTER_STATUS",
                                 "value": "disable"}]))
        stdin.channel.shutdown_write()
        out.channel.recv_exit_status()
        assert ssh_run(client, "sudo config apply-patch /tmp/off.json-patch")[0] == 0
        assert "N/A" in ssh_run(client, "show queue wredcounters")[1]
    finally:
        client.close()
    rc, report = run_json(deployed_twin, capsys, "check", "--checks", "counters")
    finding = _ecn(report, "rtsw3")
    assert rc == 1 and not finding["passed"] and finding["observed"] == "not collected"


def test_wredcounters_parser_never_turns_na_or_absence_into_zero():
    pfc = "  Port Rx    PFC0\n---------  ------\nEthernet0       0\n"
    queues = ("     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
              "---------  -----  --------------  ---------------  -----------  ------------\n"
              "Ethernet0    UC3               0                0            0             0\n")
    na = ("     Port    TxQ    WredDrp/pkts    WredDrp/bytes    EcnMarked/pkts    EcnMarked/bytes\n"
          "---------  -----  --------------  ---------------  ----------------  -----------------\n"
          "Ethernet0    UC3             N/A              N/A               N/A                N/A\n")
    sample = parse_counters(pfc, [queues], [na], 0.0)
    assert "ecn" in sample.unreadable and sample.ports["Ethernet0"].ecn_marks == {}
    assert "ecn" in parse_counters(pfc, [queues], [], 0.0).unreadable
    ok = parse_counters(pfc, [queues], [na.replace("N/A", "999")], 0.0)
    assert ok.unreadable == {} and ok.ports["Ethernet0"].ecn_marks == {3: 999}
