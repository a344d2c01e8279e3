"""The package version, in a module of its own so a module of the package can name it without
importing the package's face (rubricflow/__init__.py imports the API back: an import cycle)."""

__version__ = "0.2.0"  # the one source (pyproject.toml reads it): a worker of another version is told apart (tasks/judging/remote)
