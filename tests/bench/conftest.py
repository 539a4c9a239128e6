# The corpus projects under fix/ fail their tests on purpose (that is what the
# benchmark fixes); only check_corpus.py runs them, each in a temporary copy.
collect_ignore = ["fix"]
