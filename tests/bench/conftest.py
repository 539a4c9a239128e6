# The corpus projects under fix/ fail their tests on purpose (that is what the
# benchmark fixes); only check_corpus.py runs them, each in a temporary copy.
# The projects under diag/ hold compile and lint errors on purpose; only
# check_diag_corpus.py runs them, the same way.
# plan/ holds projects `scripts/bench_plan_parallel.py` copies and runs
# tinycoder on; their tests run there, from the project's own root.
collect_ignore = ["fix", "plan", "diag"]
