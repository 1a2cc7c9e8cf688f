"""A stand-in for a server a reader's servers.json names."""

from mcpkit import McpServerApp

app = McpServerApp("weather")


@app.tool()
def forecast(city: str) -> str:
    return f"{city}: sunny"


if __name__ == "__main__":
    app.run()
