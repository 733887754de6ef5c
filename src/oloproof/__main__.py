from oloproof.cli.main import main

main()
