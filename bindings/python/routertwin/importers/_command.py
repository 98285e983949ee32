"""`routertwin import KIND FILE [-o OUT] [--strict]` and
`routertwin export KIND SCENARIO [-o OUT]` (the CLI's part of importers)."""

from __future__ import annotations

import sys
from pathlib import Path

from routertwin.errors import UserError


def add_arguments(sub) -> None:
    from routertwin import importers

    kinds = ", ".join(k.replace("_", "-") for k in importers.available())
    i = sub.add_parser("import", help=f"a real system's configuration or table as a scenario ({kinds})")
    i.add_argument("kind", metavar="KIND", help=f"what FILE is: {kinds}")
    i.add_argument("file", type=Path, metavar="FILE")
    i.add_argument("-o", "--out", type=Path, help="write here (default: standard output)")
    i.add_argument("--strict", action="store_true",
                   help="a directive the twin does not model is an error (exit 2, nothing written)")
    e = sub.add_parser("export", help="a scenario's balancer as a configuration of KIND (haproxy)")
    e.add_argument("kind", metavar="KIND")
    e.add_argument("scenario", type=Path, metavar="SCENARIO.yaml")
    e.add_argument("-o", "--out", type=Path, help="write here (default: standard output)")


def _emit(text: str, out: Path | None) -> None:
    from routertwin.importers._lbcommon import write_atomic

    if out is None:
        sys.stdout.write(text)
    else:
        write_atomic(out, text)


def cmd_import(args) -> int:
    from routertwin import importers

    module = importers.get(args.kind)
    result = module.import_file(args.file, shown=str(args.file))
    if args.strict:
        for n in result.not_modelled:
            print(n, file=sys.stderr)
        result.check_strict()
    if hasattr(result, "scenario"):  # what is written must load: the same checks as `routertwin run`
        from routertwin.scenario_loader import validate_scenario

        validate_scenario(result.scenario, shown=f"{args.file} (imported)", base_dir=Path.cwd())
    text = result.text()
    _emit(text, args.out)
    n = len(result.not_modelled)
    print(f"{args.file}: imported; {n} directive{'s' * (n != 1)} not modelled"
          + (" (listed at the top of the output)" if n else "")
          + (f"; wrote {args.out}" if args.out else ""), file=sys.stderr)
    return 0


def cmd_export(args) -> int:
    from routertwin import importers
    from routertwin.scenario_loader import load_scenario

    module = importers.get(args.kind)
    if not hasattr(module, "export"):
        raise UserError(f"routertwin export: kind '{args.kind}' has no export")
    text = module.export(load_scenario(args.scenario))
    _emit(text, args.out)
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr)
    return 0
