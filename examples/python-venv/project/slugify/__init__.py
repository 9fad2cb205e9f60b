"""Turns titles into URL slugs."""

import re


def slugify(title: str) -> str:
    """'Hello, World!' -> 'hello-world'."""
    words = re.findall(r"[a-z0-9]+", title)
    return "-".join(words)
