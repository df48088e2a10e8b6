"""`python -m memory.worker`: run the background worker."""

import sys

from memory.worker import main

sys.exit(main())
