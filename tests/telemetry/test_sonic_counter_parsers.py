"""The SONiC collector's parsers on tables laid out as sonic-utilities prints them on real switches (layouts of
its tests' expected outputs: tests/wm_input/wm_test_vectors.py, tests/pfcstat_input/assert_show_output.py,
tests/flap_test.py; the numbers here are made up): more queues than the twin has, N/A cells, thousands
separators, blank lines between ports, a "Never" that turns a numeric column left-aligned."""

from __future__ import annotations

from nr_run.platforms.sonic.collect import parse_flaps, parse_pfc_history, parse_watermarks

WATERMARKS = """\
Egress shared pool occupancy per unicast queue:
     Port      UC0    UC1    UC2     UC3    UC4    UC5    UC6    UC7    UC8    UC9
---------  -------  -----  -----  ------  -----  -----  -----  -----  -----  -----
Ethernet0  1200304      0      0  731520      0      0      0      0     96      0
Ethernet4      N/A    N/A    N/A     N/A    N/A    N/A    N/A    N/A    N/A    N/A
Ethernet8        0      0   2080       0      0      0      0      0      0     16
"""

HISTORY = """\
     Port    Priority    RX Pause Transitions    Total RX Pause Time US    Recent RX Pause Time US    Recent RX Pause Timestamp
---------  ----------  ----------------------  ------------------------  -------------------------  ---------------------------
Ethernet0        PFC0                       0                         0                          0         01/01/1970, 00:00:00
Ethernet0        PFC3                      17                 2,450,120                    310,000         11/30/2026, 22:41:07

Ethernet4        PFC3                     N/A                       N/A                        N/A                          N/A

Ethernet8        PFC3                       2                    80,000                     40,000         11/30/2026, 22:40:59

"""

FLAPS = """\
Interface    Flap Count    Admin    Oper    Link Down TimeStamp(UTC)    Link Up TimeStamp(UTC)
-----------  ------------  -------  ------  --------------------------  ------------------------
Ethernet0    7             Up       Up      Mon Nov 30 22:10:04 2026    Mon Nov 30 22:10:09 2026
Ethernet4    Never         Up       Down    Never                       Never
"""


def test_watermarks_keep_every_queue_and_drop_na():
    assert parse_watermarks(WATERMARKS) == {
        "Ethernet0": {0: 1200304, 1: 0, 2: 0, 3: 731520, 4: 0, 5: 0, 6: 0, 7: 0, 8: 96, 9: 0},
        "Ethernet8": {0: 0, 1: 0, 2: 2080, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 0, 9: 16}}


def test_pause_history_reads_every_port_group():
    assert parse_pfc_history(HISTORY) == {"Ethernet0": {0: 0, 3: 2450120}, "Ethernet8": {3: 80000}}
    assert parse_pfc_history("Error: No such option: --history\n") == {}


def test_flap_count_never_is_zero():
    assert parse_flaps(FLAPS) == {"Ethernet0": 7, "Ethernet4": 0}
