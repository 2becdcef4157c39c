"""abyss_harness: experiments on the abyss engine as data.

Specs (TOML) describe sweeps; the runner executes them as engine
subprocesses and keeps each run's JSON report; the store turns reports into
one tidy table; plots and reports present the medians. See docs/harness.md.
"""

__version__ = "0.1.0"
