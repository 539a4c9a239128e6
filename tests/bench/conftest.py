# The corpus projects under fix/ fail their tests on purpose (that is what the
# benchmark fixes); only check_corpus.py runs them, each in a temporary copy.
# plan/ holds projects `scripts/bench_plan_parallel.py` copies and runs
# tinycoder on; their tests run there, from the project's own root.
collect_ignore = ["fix", "plan"]
