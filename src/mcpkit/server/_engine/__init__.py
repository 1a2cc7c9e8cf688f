"""The engine: the dispatcher, the connections and their lifecycle, sessions and their
state, subscriptions and open listens, shutdown. Transports feed it messages; it knows no
transport and no programming model."""
