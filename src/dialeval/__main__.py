"""``python -m dialeval``: the command line, as the ``dialeval`` script runs it (for when the script is not on PATH)."""

if __name__ == "__main__":
    from dialeval.cli import app

    app(prog_name="dialeval")
