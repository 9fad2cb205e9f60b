# The hidden verifier, copied to tests/ after the agent finished.
from slugify import slugify


def test_uppercase_letters_are_kept():
    assert slugify("Hello, World!") == "hello-world"


def test_digits_are_kept():
    assert slugify("room 101") == "room-101"
