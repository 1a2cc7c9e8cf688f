"""What differs between protocol eras on the server: the stateless 2026-07-28 era (its
per-request ``_meta``, multi-round-trip requests and their bound ``requestState``) and
the downgrade of results for older handshake-era versions."""
