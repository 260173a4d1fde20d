"""The inventory schema's constrained string types, one per safe pattern of nr_run.intent.names."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from nr_run.intent.names import (
    IDENT_PATTERN,
    NAME_MAX,
    NAME_PATTERN,
    PORT_NAME_PATTERN,
    PORT_PATTERN,
    SITE_PATTERN,
    TOKEN_PATTERN,
)

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=NAME_MAX)]
SiteName = Annotated[str, StringConstraints(pattern=SITE_PATTERN)]
Ident = Annotated[str, StringConstraints(pattern=IDENT_PATTERN)]
Token = Annotated[str, StringConstraints(pattern=TOKEN_PATTERN)]
PortName = Annotated[str, StringConstraints(pattern=PORT_NAME_PATTERN)]
Port = Annotated[str, StringConstraints(pattern=PORT_PATTERN)]
