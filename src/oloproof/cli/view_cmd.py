"""``oloproof view``: serve the read-only browser viewer, or export its pages as a static site."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from oloproof.cli.main import app, fail
from oloproof.cli.project import keep_out_declared, project_root


@app.command("view")
def view_command(
    runs: list[str] | None = typer.Argument(
        None, help="With --export: the runs to export (ids, refs or addresses)."
    ),
    port: int = typer.Option(
        8765, "--port", min=0, max=65535, help="The port to serve on (0: any free port)."
    ),
    open_browser: bool = typer.Option(False, "--open", help="Open the viewer in a browser."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="The address to bind; only loopback without --allow-remote."
    ),
    allow_remote: bool = typer.Option(
        False,
        "--allow-remote",
        help="Allow binding an address other machines can reach (the ledger becomes readable "
        "by anyone who reaches it).",
    ),
    export_dir: Path | None = typer.Option(
        None, "--export", help="Write the pages of RUN… to this folder instead of serving."
    ),
) -> None:
    """Browse this project's ledger in a web browser: runs, cases, diagnoses, comparisons.

    The viewer only reads the ledger; a run still in progress shows its new cases on reload.

    Example: oloproof view --open

    Example: oloproof view --export site run_01M4FCBPE0G550CKCVGXCNEM2P
    """
    from oloproof.view import export, is_loopback, make_server, open_viewer

    if export_dir is not None and not runs:
        fail("--export needs at least one run to export (oloproof view --export DIR RUN…)")
    if export_dir is None and runs:
        fail("runs are given only with --export; `oloproof view` serves every run")
    from oloproof.idhints import malformed_id_message

    for text in runs or []:
        malformed = malformed_id_message(text)
        if malformed is not None:
            fail(malformed)
    if not is_loopback(host) and not allow_remote:
        fail(f"refusing to serve on {host}, which other machines may reach; add --allow-remote")
    keep_out_declared()  # the pages and the export are written through it
    reader = open_viewer(project_root())
    if export_dir is not None:
        done = export(reader, export_dir, runs or [])
        typer.echo(
            f"Exported {len(done.runs)} run(s), {done.pages} pages, to {done.folder}; "
            f"open {done.folder / 'index.html'}"
        )
        return
    if not is_loopback(host):
        sys.stderr.write(
            f"warning: serving on {host}: anyone who can reach it can read this ledger\n"
        )
    try:
        server = make_server(reader, host, port)
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror}")
    bound_port = server.server_address[1]
    url = f"http://{host}:{bound_port}/"
    typer.echo(
        f"Serving {project_root() / '.oloproof'} read-only at {url} (Ctrl-C stops)", err=False
    )
    sys.stdout.flush()
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        reader.close()
