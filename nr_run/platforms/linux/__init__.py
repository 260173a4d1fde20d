"""Linux GPU servers: RoCE NICs configured and observed over SSH (ip, dcb, mlx5 sysfs, rdma_cm configfs, rdma,
ping, perftest), through the same deploy calls as the switches (nr_run.platforms.linux.driver)."""

from nr_run.platforms.base import DeployCapabilities, Platform
from nr_run.platforms.collector import LazyCollector
from nr_run.platforms.linux.config import LinuxConfig
from nr_run.platforms.linux.policy import LinuxPolicy
from nr_run.platforms.linux.transport import LinuxTransport

platform = Platform(name="linux", transport=LinuxTransport(), collector=LazyCollector("nr_run.platforms.linux.collect"),
                    config=LinuxConfig(),
                    deploy=LinuxPolicy("linux", DeployCapabilities(commit_timer=True, replace=True)))
