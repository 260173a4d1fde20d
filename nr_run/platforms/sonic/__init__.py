"""Community SONiC: CONFIG_DB JSON applied through napalm_sonic (GCU patches), checkpoints and revert timers."""

from nr_run.platforms.base import DeployCapabilities, Platform
from nr_run.platforms.policy import RegexPolicy
from nr_run.platforms.sonic.config import SonicConfig
from nr_run.platforms.sonic.transport import SonicTransport
from nr_run.validators.collect import sonic as _collector  # SCAFFOLD: moves to nr_run.platforms.sonic.collect

platform = Platform(
    name="sonic",
    transport=SonicTransport(),
    collector=_collector,  # type: ignore[arg-type]
    config=SonicConfig(),
    deploy=RegexPolicy("sonic", DeployCapabilities(commit_timer=True, replace=True)),
)
