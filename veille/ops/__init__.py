"""Operating veille with Prefect: task runners, the temporary API, server processes, server-side
setup, the model-call slot, the nightly schedule and cleaning. Import the submodule you need.
"""
