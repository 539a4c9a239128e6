# Root on sys.path for the checks/ folder.
