"""Collector: Algorithm 3 and the pure parsers of monitor output (sadf JSON, network
counters, tshark statistics). Parse errors name the source file and line."""

from workbench.collector.algorithm3 import RunMeasurements, collect, split_io_time, utilisation
from workbench.collector.net import IfaceCounters, parse_sysfs_counters
from workbench.collector.sar import SarSummary, parse_sadf_json
from workbench.collector.tshark import (
    RttSummary,
    SrtRow,
    parse_ack_rtt,
    parse_io_stat,
    parse_rpc_srt,
    rtt_from,
)
from workbench.errors import ParseError

__all__ = [
    "IfaceCounters",
    "ParseError",
    "RttSummary",
    "RunMeasurements",
    "SarSummary",
    "SrtRow",
    "collect",
    "parse_ack_rtt",
    "parse_io_stat",
    "parse_rpc_srt",
    "parse_sadf_json",
    "parse_sysfs_counters",
    "rtt_from",
    "split_io_time",
    "utilisation",
]
