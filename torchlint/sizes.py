"""Sizes as the SI and IEC mean them, for every size a user writes (``max-file-size``,
``trace.memory-limit``, ``--gpu-memory``): kB, MB, GB and TB are decimal; KiB, MiB, GiB and
TiB binary."""

SIZE_UNITS = {"b": 1, "kb": 10**3, "kib": 2**10, "mb": 10**6, "mib": 2**20, "gb": 10**9, "gib": 2**30,
              "tb": 10**12, "tib": 2**40}
