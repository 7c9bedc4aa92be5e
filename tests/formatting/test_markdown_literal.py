"""Text shown literally in markdown: a filter shape's dollars do not start a formula, markdown's marks and HTML do
nothing, and a control character cannot split a list item."""
import markdown

from capmodel.formatting import markdown_literal, printable


def test_a_filter_shape_reads_as_written():
    text = "13f2bb4a find on shopdemo.orders {customer: ?, placed: {$gte: ?, $lt: ?}}"
    assert markdown_literal(text) == text.replace("$", "\\$")


def test_marks_html_and_control_characters_are_shown_not_obeyed():
    assert markdown_literal("a_b *c* <img onerror=x>") == "a\\_b \\*c\\* &lt;img onerror=x&gt;"
    assert printable("db\n1") == "db\\n1"                 # the newline written as its escape
    assert markdown_literal("db\n1") == "db\\\\n1"
    rendered = markdown.markdown(f"- {markdown_literal('x_1 *y* [z](u)')}")
    assert "<em>" not in rendered and "<a " not in rendered and "x_1 *y* [z](u)" in rendered
