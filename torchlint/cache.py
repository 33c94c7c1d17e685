"""A content-addressed cache of per-file results in ``.torchlint_cache/``.

An entry holds one file's findings and its record (facts for the project pass), keyed by a
hash of the file's bytes, its path, the torchlint version and every setting that changes
per-file results. An unchanged file is never parsed again; the project pass still sees
every file's record. Entries are written to a temporary file and renamed into place, so
concurrent runs never see half an entry; an unreadable or foreign entry is ignored (and
rewritten), never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from torchlint import __version__
from torchlint.engine import FileResult
from torchlint.finding import Finding
from torchlint.project import FileRecord

FORMAT = 3  # 2: facts stored as JSON text, exactly as records hold them; 3: record.index
TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by torchlint.\n"


def settings_key(enabled: frozenset[str], rule_options: dict[str, dict[str, Any]]) -> str:
    blob = json.dumps({"v": __version__, "f": FORMAT, "enabled": sorted(enabled), "options": rule_options},
                      sort_keys=True, default=str)
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


class Cache:
    def __init__(self, directory: Path, enabled: frozenset[str], rule_options: dict[str, dict[str, Any]]):
        self.directory = directory
        self.settings = settings_key(enabled, rule_options)
        self.bucket = directory / f"v{FORMAT}" / self.settings
        self._ready = False
        self.hits = 0
        self.misses = 0

    def key(self, path: str, data: bytes) -> str:
        h = hashlib.blake2b(data, digest_size=20)
        h.update(b"\0" + path.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.bucket / key[:2] / f"{key}.json"

    def get(self, path: str, key: str) -> FileResult | None:
        try:
            raw = self._entry(key).read_bytes()
        except OSError:
            self.misses += 1
            return None
        try:
            data = json.loads(raw)
            if data.get("key") != key or data.get("settings") != self.settings or data.get("path") != path:
                raise ValueError("foreign entry")
            findings = [Finding.from_dict(f) for f in data["findings"]]
            record = FileRecord.from_json(data["record"])
        except Exception:  # noqa: BLE001 - a corrupt entry is a miss, never fatal
            self.misses += 1
            return None
        self.hits += 1
        return FileResult(path, findings, record)

    def _prepare(self) -> None:
        if self._ready:
            return
        self.bucket.mkdir(parents=True, exist_ok=True)
        tag = self.directory / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text(TAG)
        ignore = self.directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by torchlint automatically.\n*\n")
        self._ready = True

    def put(self, key: str, result: FileResult) -> None:
        if result.errors:  # a crashed rule's result is incomplete: never cache it
            return
        payload = {
            "key": key,
            "settings": self.settings,
            "path": result.path,
            "findings": [f.to_dict() for f in result.findings],
            "record": result.record.to_json(),
        }
        try:
            self._prepare()
            entry = self._entry(key)
            entry.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(payload, fh, separators=(",", ":"))
                os.replace(tmp, entry)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            pass  # a read-only or full disk must not fail the lint
