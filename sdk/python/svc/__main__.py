import sys

from svc.cli import main

sys.exit(main())
