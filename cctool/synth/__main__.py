import sys

from cctool.synth import main

sys.exit(main())
