"""Linux GPU servers: RoCE NICs observed over SSH (ip, dcb, rdma, ping, perftest); nr-run configures nothing there."""

from nr_run.platforms.base import Platform
from nr_run.platforms.linux.collect import collector as _collector
from nr_run.platforms.linux.transport import LinuxTransport

platform = Platform(name="linux", transport=LinuxTransport(), collector=_collector)
