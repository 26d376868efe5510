import sys

from treekit_core.cli import main

sys.exit(main())
