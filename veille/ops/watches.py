"""The watches of a checkout: each deployment of prefect.yaml and the corpus it runs on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Watch", "read_watches"]


@dataclass(frozen=True)
class Watch:
    deployment: str  # the deployment's name (flow "veille")
    corpus_dir: Path


def read_watches(prefect_yaml: Path, default_corpus: Path) -> list[Watch]:
    """One watch per deployment of ``prefect_yaml``; a null ``corpus`` parameter is the settings'
    corpus. Relative corpus paths are read from the file's folder (where ``prefect deploy`` runs)."""
    try:
        raw: Any = yaml.safe_load(prefect_yaml.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{prefect_yaml}: cannot read the deployments ({type(exc).__name__})") from exc
    watches = []
    for i, deployment in enumerate(raw.get("deployments") or []):
        name = deployment.get("name") if isinstance(deployment, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError(f"{prefect_yaml}: deployments.{i}.name: expected a deployment name")
        corpus = (deployment.get("parameters") or {}).get("corpus")
        path = default_corpus if corpus is None else Path(str(corpus)).expanduser()
        watches.append(Watch(name, path if path.is_absolute() else prefect_yaml.parent / path))
    return watches
