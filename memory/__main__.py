import os

from memory.cli import main

os.umask(0o077)  # what the CLI creates in the data dir (folders, LanceDB files, a worker it starts) is owner-only
main()
