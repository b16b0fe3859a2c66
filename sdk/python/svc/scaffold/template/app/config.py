"""Typed views of application.yaml sections."""

from dataclasses import dataclass

from svc import configuration


@configuration("app")
@dataclass
class AppSettings:
    name: str
    version: str = "0.1.0"
