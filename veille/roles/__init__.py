"""LLM roles. Each module holds one role's output schema, its instructions and its prompt builder.

The ``*Input`` models are the structured inputs a prompt is built from: what any model needs to
answer. They travel in ``ModelRequest.input``, so a function backend (the offline engine) answers
from the data instead of parsing prompts.
"""
