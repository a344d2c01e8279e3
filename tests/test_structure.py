"""The shape of the package: one top-level name, an import graph without cycles, thin CLI modules,
and Prefect kept out of the commands that run no flow."""

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rubricflow.layout import package_dirs
from tests.conftest import ROOT

PACKAGES = package_dirs(ROOT)  # pyproject.toml's package-dir: the one source of the folder-to-package mapping


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[0] in ("samples",) or (package == "rubricflow" and parts[0] in ("rubrics", "tasks")):
                continue
            name = ".".join((package, *parts)).removesuffix(".__init__")
            found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Project modules `name` imports, at any depth of the file (function-level imports count)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            named = [f"{base}.{a.name}" for a in node.names]
            # `from pkg import submodule` needs the submodule, not the face's own names
            targets = named + ([base] if any(n not in known for n in named) else [])
        for t in targets:
            if t in known and t != name:
                found.add(t)
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative):
    each is a set of modules that import one another, directly or around a loop."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_import_cycles_among_the_project_modules():
    """A package's face (its __init__) counts: a module importing its own package's names back is a cycle
    (`from . import name` of a submodule is no such import)."""
    mods = modules()
    known = set(mods)
    graph = {m: imports_of(m, p, known) for m, p in mods.items()}
    cycles = import_cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)
    assert len(graph) > 60  # the walk saw the whole project


def test_the_cycle_finder_finds_a_loop_through_a_face():
    graph = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p"}, "q": {"p"}, "r": set()}
    assert import_cycles(graph) == [["p", "p.a", "p.b"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


TASK_LAYERS = ["runtime", "judging", "loaders", "stats", "standins", "improve", "presentation", "pipeline", "reward"]


def test_tasks_subpackages_import_only_the_layers_before_them():
    """tasks/ by kind, the arrows pointing down: a module of one layer imports modules of its own
    layer or of the layers before it in TASK_LAYERS, never after (README: architecture)."""
    mods = modules()
    known = set(mods)
    found = {p.name for p in (ROOT / "tasks").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert found == set(TASK_LAYERS), found
    assert not [p.name for p in (ROOT / "tasks").glob("*.py") if p.name != "__init__.py"]  # every module has a kind
    upward = []
    for name, path in mods.items():
        if not name.startswith("rubricflow.tasks.") or name.count(".") < 3:
            continue
        layer = TASK_LAYERS.index(name.split(".")[2])
        for target in imports_of(name, path, known):
            parts = target.split(".")
            if target.startswith("rubricflow.tasks.") and len(parts) > 2 and TASK_LAYERS.index(parts[2]) > layer:
                upward.append(f"{name} -> {target}")
    assert not upward, upward


def test_cli_modules_stay_thin():
    sizes = {p.name: len(p.read_text().splitlines()) for p in (ROOT / "rubricflow" / "cli").glob("*.py")}
    assert len(sizes) >= 10 and max(sizes.values()) <= 250, sizes


def test_commands_that_run_no_flow_do_not_import_prefect():
    code = (
        "import sys; from typer.testing import CliRunner; from rubricflow.cli import app; "
        "r = CliRunner().invoke(app, ['rubric', 'list']); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('prefect', 'duckdb', 'polars', 'openai', 'jsonschema')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "prefect" not in result.stdout, result.stdout
    # nor the model SDK (0.7 s of a command's ~1.5 s of imports: every `rubricflow` process in the
    # suite that calls no model paid it); the first model call loads it
    assert "openai" not in result.stdout, result.stdout
    assert "jsonschema" not in result.stdout, result.stdout  # PaperBench's schema check loads it (0.1 s)


def test_the_cli_starts_without_the_rubric_compiler_or_importers():
    """Every `rubricflow` process imports rubricflow.cli (its options come from JudgeConfig, which needs
    rubrics.model); the rubrics package's face imported the compiler and the importers with it (~25% of
    the import's CPU), which a command loads when it reads a rubric."""
    code = "import sys, rubricflow.cli; print(sorted(m for m in sys.modules if m.startswith('rubricflow.rubrics.')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    for heavy in ("rubricflow.rubrics.compiler", "rubricflow.rubrics.formats", "rubricflow.rubrics.importers"):
        assert f"'{heavy}'" not in result.stdout, result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The files of the wheel built from this tree (as `pip install .` and deploy/Dockerfile build it)."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = out.glob("rubricflow-*.whl")
    return zipfile.ZipFile(wheel)


@pytest.mark.slow
def test_the_wheel_installs_one_top_level_package(wheel):
    names = wheel.namelist()
    top_level = wheel.read(next(n for n in names if n.endswith(".dist-info/top_level.txt"))).decode().split()
    assert top_level == ["rubricflow"]
    assert {n.split("/")[0] for n in names if not n.startswith("rubricflow-")} == {"rubricflow"}
    for packaged in (
        "rubricflow/rubrics/library/llm-slop.yaml",
        "rubricflow/warehouse/sql/001_schema.sql",
        "rubricflow/flows/samples/demo_corpus.jsonl",
        "rubricflow/cli/__init__.py",
    ):
        assert packaged in names


@pytest.mark.slow
def test_the_wheel_holds_every_module_of_the_source_tree(wheel):
    """The wheel's modules equal the source's, folder for folder (a package list kept by hand missed
    tasks/judging/providers, and every scoring path failed with an ImportError once installed)."""
    source = set()
    for package, folder in PACKAGES.items():
        prefix = package.replace(".", "/")
        source |= {f"{prefix}/{path.relative_to(folder).as_posix()}" for path in folder.rglob("*.py")}
    packaged = {n for n in wheel.namelist() if n.endswith(".py")}
    assert packaged == source, (sorted(source - packaged), sorted(packaged - source))
    assert "rubricflow/tasks/judging/providers/__init__.py" in packaged


def test_the_tests_of_tasks_mirror_its_layers():
    """A module of tasks/<layer>/ is tested under tests/tasks/<layer>/: a reader finds a module's
    tests by its path, and tests/tasks holds no test file of no layer."""
    tests = ROOT / "tests" / "tasks"
    assert not list(tests.glob("test_*.py"))
    folders = {p.name for p in tests.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders and folders <= set(TASK_LAYERS), folders


def test_the_longest_first_modules_exist_and_go_first(request):
    """tests/conftest.py hands the longest files out first; a renamed or removed one would silently
    fall back into the tail it was listed to leave."""
    from tests.conftest import LONGEST_FIRST

    assert all((ROOT / "tests" / module).is_file() for module in LONGEST_FIRST), LONGEST_FIRST
    modules = list(
        dict.fromkeys(Path(str(i.fspath)).relative_to(ROOT / "tests").as_posix() for i in request.session.items)
    )
    listed = [m in LONGEST_FIRST for m in modules]
    assert listed == sorted(listed, reverse=True)  # every listed module (of those collected) before the others
    assert [m for m in modules if m in LONGEST_FIRST] == [m for m in LONGEST_FIRST if m in modules]


ENVIRONMENT_READERS = {  # the modules that may read os.environ: the tree, the secrets scrubber, the entry point
    "rubricflow.settings",
    "rubricflow.tasks.judging.secrets",
    "rubricflow.cli",
}
_ENVIRONMENT_WRITES = {"setdefault", "update", "clear", "pop", "__setitem__", "__delitem__"}


def environment_reads(path: Path) -> list[int]:
    """Lines of `path` that read the environment (os.environ, os.getenv, environ imported from os);
    a write (`os.environ[k] = v`, `.update`, `.clear`, `.setdefault`: variables for a child process) is no read."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            lines += [node.lineno for a in node.names if a.name in ("environ", "getenv", "environb", "getenvb")]
        is_env = isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "getenvb")
        if not is_env:
            continue
        up = parents.get(node)
        if isinstance(up, ast.Subscript) and isinstance(up.ctx, (ast.Store, ast.Del)):
            continue
        if isinstance(up, ast.Attribute) and up.attr in _ENVIRONMENT_WRITES and isinstance(parents.get(up), ast.Call):
            continue
        lines.append(node.lineno)
    return sorted(lines)


def test_only_the_settings_tree_the_scrubber_and_the_entry_point_read_the_environment():
    """Every other module is handed values, or asks rubricflow/settings.py (docs/settings.md lists them all)."""
    readers = {name: lines for name, path in modules().items() if (lines := environment_reads(path))}
    strays = {
        f"{modules()[n].relative_to(ROOT)}:{lines}" for n, lines in readers.items() if n not in ENVIRONMENT_READERS
    }
    assert not strays, "read the variable through rubricflow/settings.py: " + ", ".join(sorted(strays))
    assert len(readers) <= 3 and "rubricflow.settings" in readers


def test_the_environment_reader_check_tells_reads_from_writes(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "import os\nos.environ['A'] = '1'\nos.environ.update(B='2')\nos.environ.clear()\n"
        "x = os.environ.get('C')\ny = dict(os.environ)\nz = os.getenv('D')\n"
    )
    assert environment_reads(module) == [5, 6, 7]


def test_the_judge_module_keeps_to_one_concern_in_at_most_400_lines():
    """tasks/judging/judge.py is the Judge's call layers (send, ask, re-ask); its data types live in
    cells.py and its request shaping in request_shape.py (it was 532 lines with all three)."""
    lines = (ROOT / "tasks" / "judging" / "judge.py").read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"tasks/judging/judge.py has {lines} lines: move a concern to a module of its own"


def unresolved_merges(files: list[Path]) -> list[str]:
    """`file:line` of every merge-conflict marker line (`<<<<<<< ` / `>>>>>>> `) in `files`."""
    found = []
    for file in files:
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue  # binary or unreadable: no text conflict to leave behind
        found += [f"{file.name}:{n}" for n, line in enumerate(lines, 1) if line.startswith(("<<<<<<< ", ">>>>>>> "))]
    return found


def test_no_tracked_file_keeps_a_merge_conflict():
    """A merge committed with its conflict markers (docs/architecture.md carried one through a landed CI: the
    strict docs build renders them as text) must not pass again."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert unresolved_merges([ROOT / name for name in tracked.split("\n") if name]) == []


def test_the_merge_marker_check_finds_a_marker(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n")
    assert unresolved_merges([page]) == ["page.md:2", "page.md:6"]
