"""The floor plan of docs/architecture.md: the package root, the import contracts, small units."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLKIT = ROOT / "toolkit"


def test_the_package_root_holds_the_public_api_errors_and_floors() -> None:
    files = sorted(p.name for p in TOOLKIT.iterdir() if p.is_file())
    assert files == ["__init__.py", "_version.py", "errors.py", "py.typed"]
    folders = [p for p in TOOLKIT.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert all((folder / "__init__.py").is_file() for folder in folders), folders


def test_the_import_contracts_hold() -> None:
    """`make arch` runs the same check; here it runs with the tests, in this tree."""
    program = "import sys, importlinter.cli as c; sys.exit(c.lint_imports(no_cache=True))"
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _modules() -> list[Path]:
    return sorted(TOOLKIT.rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in _modules():
        name = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 60:
                    long[f"{name}:{node.name}"] = lines
    assert long == {}


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth: under ``TYPE_CHECKING``, in functions."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_the_packages_below_config_take_their_own_options_not_the_settings() -> None:
    """The audit takes ``AuditOptions`` as collect takes ``CrawlOptions``: no module of the
    floors below ``toolkit.config`` imports it, not even for a type annotation."""
    below = ("api", "audit", "collect", "report", "schedule", "snapshot")
    offenders = {
        str(path.relative_to(ROOT)): sorted(names)
        for package in below
        for path in sorted((TOOLKIT / package).rglob("*.py"))
        if (names := {n for n in _imported(path) if n.startswith("toolkit.config")})
    }
    assert offenders == {}


def test_the_import_contracts_ignore_no_import() -> None:
    """An exception to a contract is a debt; none is left."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        contracts = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    ignored = {c["id"]: c["ignore_imports"] for c in contracts if c.get("ignore_imports")}
    assert ignored == {}


def _engine_modules() -> list[str]:
    """What a reader of ``toolkit/audit`` has to learn: its top-level modules other than
    ``__init__.py`` (the package's face), and each subpackage that holds Python code (a
    unit with a face of its own, such as the waivers or the frameworks' loader). Folders of
    data only (``checks/``, ``views/``: SQL files) are not modules."""
    audit = TOOLKIT / "audit"
    modules = [p.stem for p in audit.glob("*.py") if p.name != "__init__.py"]
    packages = [p.name for p in audit.iterdir() if p.is_dir() and any(p.glob("*.py"))]
    return sorted(modules + [f"{name}/" for name in packages])


def test_the_audit_engine_is_at_most_12_modules() -> None:
    """The outputs live on the report floor, the fixtures' loader with the tests, the text
    reader under the errors: the audit package holds the engine and what it is made of."""
    modules = _engine_modules()
    assert len(modules) <= 12, modules
