"""From Python callables to JSON Schema and back: signatures to input and output schemas
(msgspec, pydantic), docstrings to descriptions, and the validator of raw schemas."""
