"""``python -m oloproof`` and the ``oloproof`` script.

Loading the command's modules takes a good part of a second on a busy machine; a Ctrl-C then
ends the command as one a moment later does (``interrupted``, exit 130), not with Python's
traceback of the import it stopped.
"""

from oloproof.cli.interrupted import exit_interrupted


def command() -> None:
    """Load the CLI and run it."""
    try:
        from oloproof.cli.main import command as run
    except KeyboardInterrupt as exc:
        exit_interrupted(exc)
    run()


if __name__ == "__main__":
    command()
