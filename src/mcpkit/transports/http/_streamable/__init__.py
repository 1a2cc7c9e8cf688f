"""Streamable HTTP: the POST/GET/DELETE handler, sessions and their store, the SSE
streams and their resumption, calls in flight, and the cluster that routes them between
instances."""
