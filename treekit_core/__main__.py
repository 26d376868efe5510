import sys

from treekit_core.tools.cli import main

sys.exit(main())
