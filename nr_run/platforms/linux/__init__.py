"""Linux GPU servers: RoCE NICs observed over SSH (ip, dcb, rdma, ping, perftest); nr-run configures nothing there."""

from nr_run.platforms.base import Platform
from nr_run.platforms.linux.transport import LinuxTransport
from nr_run.validators.collect import linux as _collector  # SCAFFOLD: moves to nr_run.platforms.linux.collect

platform = Platform(name="linux", transport=LinuxTransport(), collector=_collector)  # type: ignore[arg-type]
