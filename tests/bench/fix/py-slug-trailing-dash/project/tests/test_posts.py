from datetime import date

from blog.posts import Post
from blog.text import excerpt, slugify


def test_simple_permalink():
    post = Post("Hello World", "Hi.", date(2024, 2, 9))
    assert post.permalink == "/2024/02/hello-world/"


def test_accents_are_folded():
    assert slugify("Crème brûlée at home") == "creme-brulee-at-home"


def test_permalink_of_question_title():
    post = Post("Why is the sky blue?", "Because.", date(2023, 11, 1))
    assert post.permalink == "/2023/11/why-is-the-sky-blue/"


def test_long_title_cut_at_word():
    slug = slugify("a" * 10 + " " + "b" * 60, max_length=30)
    assert slug == "a" * 10


def test_excerpt_cut():
    assert excerpt("one two three four", limit=9) == "one two…"
