from oloproof.cli.main import command

command()
