"""A stand-in plugin's pyproject.toml for the tests that run the real scripts/setup offline."""

PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "stand-in-plugin"
version = "{version}"
dependencies = [{deps}]
{extra}"""
