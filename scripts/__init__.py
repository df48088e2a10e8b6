"""The project's own tools: setup and test (shell), and the benchmarks in scripts/bench/."""
