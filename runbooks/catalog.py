"""A site's catalog of checks and thresholds: `inventory/<site>/catalog.yaml`, optional, validated like the inventory.

It versions beside the inventory what `--checks` and `--option` say per run, so a site's thresholds are reviewed
like its cabling. Format (docs/inventory-format.md, "catalog.yaml"):

    version: 1
    checks: [pfc, ecn, interfaces]          # the default selection of check and compliance (names or tags)
    options:                                # thresholds, as --option CHECK.KEY=VALUE gives them
      counters: {max_pause_pps: 20}
    job_check:
      unknown: pass                         # pass | drain: whether "could not check" drains a job
      budget_s: 10                          # the default --budget

A run's `--option` values go over the catalog's key by key; `--checks` replaces its selection. A missing file is
an empty catalog; a bad one is an InventoryError naming the file and the field (exit 3, nothing read).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nr_run.intent.errors import Finding, InventoryError
from nr_run.intent.nametypes import Ident
from nr_run.intent.source import _load_yaml
from nr_run.validators.base import InvalidOption, UnknownCheck, select, validate_options

FILE = "catalog.yaml"
BUDGET_RANGE = (1.0, 600.0)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JobCheckSettings(_Strict):
    # pass: a switch that could not be read within the budget is named (exit 4) and the job starts;
    # drain: it drains the job as a finding would
    unknown: Literal["pass", "drain"] = "pass"
    budget_s: float | None = Field(None, ge=BUDGET_RANGE[0], le=BUDGET_RANGE[1])


class Catalog(_Strict):
    version: Literal[1] = 1
    checks: list[Ident] | None = Field(None, max_length=256)
    options: dict[Ident, dict[Ident, Any]] = Field(default_factory=dict, max_length=256)
    job_check: JobCheckSettings = JobCheckSettings(unknown="pass", budget_s=None)

    def merged_options(self, run: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
        """The catalog's options with the run's over them, key by key."""
        merged = {check: dict(values) for check, values in self.options.items()}
        for check, values in (run or {}).items():
            merged.setdefault(check, {}).update(values)
        return merged


def _bad(file: str, field: str, message: str) -> InventoryError:
    return InventoryError([Finding("error", "catalog", file, "", field, message)])


def load_catalog(site_dir: Path) -> Catalog:
    """The site's catalog (an empty one when the file is absent); InventoryError when it is not valid."""
    path = site_dir / FILE
    problems: list[Finding] = []
    raw = _load_yaml(path, problems, required=False)
    if problems:
        raise InventoryError(problems)
    file = str(path)
    try:
        catalog = Catalog.model_validate(raw)
    except ValidationError as exc:
        errors = [Finding("error", "catalog", file, "", ".".join(str(p) for p in err["loc"]),
                          "unknown key" if err["type"] == "extra_forbidden" else err["msg"])
                  for err in exc.errors()]
        raise InventoryError(errors) from None
    try:
        validate_options(catalog.options)
    except InvalidOption as exc:
        raise _bad(file, "options", str(exc)) from None
    if catalog.checks is not None:
        try:
            select(catalog.checks)
        except UnknownCheck as exc:
            raise _bad(file, "checks", str(exc)) from None
    return catalog
