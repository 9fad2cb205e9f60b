import os
import sys

# The package is imported from the project root, without installing it into the virtualenv.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
