from __future__ import annotations

import sys

from daemon.cli import main

sys.exit(main())
