from cctool.cli import main

main()
