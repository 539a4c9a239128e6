# Project root on sys.path for the specs in spec/.
