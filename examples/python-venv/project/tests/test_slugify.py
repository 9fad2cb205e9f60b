from slugify import slugify


def test_joins_words_with_dashes():
    assert slugify("hello world") == "hello-world"
