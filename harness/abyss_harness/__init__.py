"""abyss_harness: experiments on the abyss engine as data.

Specs (TOML) describe sweeps; the runner executes them as engine
subprocesses and keeps each run's JSON report; the store turns reports into
one tidy table; plots and reports present the medians. See docs/harness.md.
"""

__version__ = "0.1.0"

__all__ = ["run", "Result"]


def __getattr__(name: str):
    # `run` and `Result` load pandas and the engine's tables: only when asked for.
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
