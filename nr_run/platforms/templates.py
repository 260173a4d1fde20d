"""Platform templates and policies are package data (`nr_run.templates/<platform>/`), read through
importlib.resources so a plain wheel install works like an editable one. A missing file is an error."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path


class TemplateMissing(FileNotFoundError):
    """A platform's template or policy file is not installed."""


PACKAGE = "nr_run.templates"


def template_dir(platform: str, package: str = PACKAGE) -> Path:
    """The folder of a platform's templates (a real folder: Jinja2's loader needs one).

    `package` lets a platform from another distribution keep its templates in its own package data.
    """
    with as_file(files(package).joinpath(platform)) as path:
        folder = Path(path)
    if not folder.is_dir():
        raise TemplateMissing(f"no templates installed for platform {platform!r} ({folder})")
    return folder


def read_text(platform: str, name: str, package: str = PACKAGE) -> str:
    """One package-data file of a platform, e.g. read_text("eos", "policy.yaml")."""
    resource = files(package).joinpath(platform).joinpath(name)
    if not resource.is_file():
        raise TemplateMissing(f"templates/{platform}/{name} is not installed")
    return resource.read_text(encoding="utf-8")
