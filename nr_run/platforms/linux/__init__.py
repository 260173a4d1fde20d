"""Linux GPU servers: RoCE NICs observed over SSH (ip, dcb, rdma, ping, perftest); nr-run configures nothing there."""

from nr_run.platforms.base import Platform
from nr_run.platforms.collector import LazyCollector
from nr_run.platforms.linux.transport import LinuxTransport

platform = Platform(name="linux", transport=LinuxTransport(), collector=LazyCollector("nr_run.platforms.linux.collect"))
