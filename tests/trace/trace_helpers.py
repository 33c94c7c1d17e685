from __future__ import annotations

from pathlib import Path

MODELS = Path(__file__).resolve().parent / "models"
REPO = Path(__file__).resolve().parents[2]


def job(job_id: str, file: str, attr: str, **extra):
    data = {"id": job_id, "target": {"file": str(MODELS / file), "module": None, "attr": attr,
                                     "display": f"{file}:{attr}"},
            "device": "meta", "mode": "trace"}
    data.update(extra)
    return data
