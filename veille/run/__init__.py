"""Flow bookkeeping: the run log between the steps, the run folder, run.json, recovery of dead runs,
the printed summary and the test kill points. Import the submodule you need.
"""
