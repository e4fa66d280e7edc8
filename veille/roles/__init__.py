"""LLM roles. Each module holds one role's output schema, its instructions and its prompt builder.

The ``*Input`` models are the structured inputs a prompt is built from; they travel in
``ModelRequest.payload`` so the offline engine can work from data instead of parsing prompts.
"""
