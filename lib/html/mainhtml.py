"""The main content as HTML with structural tags only (``main_html``), written in the walk that
writes the main text (lib/html/maintext.py; lib/html/native/lexwalk.c writes the same bytes).

The walk tells the writer what it tells the text: an element kept is entered (:meth:`push`) and
left (:meth:`pop`), a block boundary (:meth:`brk`), a cell boundary (:meth:`space`), text
(:meth:`text`). The writer keeps the tags of :data:`TAGS` (lib/html/rules.py's ``HTML_TAGS``; ``a``
only with an href that resolves to an absolute http(s) URL, written resolved) and drops every other tag, keeping its
text; an element is written only once text is written inside it (no empty ``<p></p>``, no
``<a>`` around an image alone). Where the text breaks a line and no kept block tag does (a
``div``, ``br``, ``dd``... boundary), it writes ``<br>``; inside ``<pre>`` a line break and
the whitespace as they are. Text is HTML-escaped (``& < >``), attribute values too (and
quotes), so that the text of ``main_html`` parsed back is the main text, block for block.
"""

from __future__ import annotations

from html import escape

from lib.html.rules import HTML_BLOCK as BLOCK
from lib.html.rules import HTML_CELL as CELL
from lib.html.rules import HTML_CONTEXT as CONTEXT
from lib.html.rules import HTML_INLINE as INLINE
from lib.html.rules import HTML_TAGS as TAGS


def _utf8(s: str) -> bool:
    """Whether ``s`` has a UTF-8 form (no lone surrogate, as an undecodable URL may carry)."""
    try:
        s.encode()
    except UnicodeEncodeError:
        return False
    return True


class HtmlWriter:
    """Writes main_html as the walk goes (the reference of lexwalk.c's html_t)."""

    __slots__ = ("out", "stack", "written", "content", "breaks", "ws", "pre", "resolve")

    def __init__(self, resolve):
        self.out: list[str] = []
        self.stack: list[tuple[str, str | None]] = []  # (tag, open tag to write or None) per element entered
        self.written = 0  # the stack's first `written` open tags are written
        self.content = False  # the current line has text
        self.breaks = 0  # line breaks since that text, not yet written
        self.ws = ""  # whitespace since the last text or break, not yet written
        self.pre = 0  # <pre> elements on the stack
        self.resolve = resolve  # href -> absolute URL or None (lib.html.content.LinkResolver)

    def push(self, tag: str, attrs: dict | None = None, root: bool = False) -> None:
        """An element kept by the walk is entered (``root``: the content root)."""
        if root:
            for outer in CONTEXT.get(tag, ()):
                self.stack.append((outer, f"<{outer}>"))
        kind = TAGS.get(tag)
        markup = None
        if kind is not None:
            if tag == "a":
                url = self.resolve(attrs.get("href") or "") if attrs and "href" in attrs else None
                markup = f'<a href="{escape(url)}">' if url and _utf8(url) else None
            else:
                markup = f"<{tag}>"
                self.pre += tag == "pre"
        self.stack.append((tag, markup))

    def pop(self) -> None:
        """The innermost element entered is left."""
        tag, markup = self.stack.pop()
        written = len(self.stack) < self.written
        if written:
            self.written -= 1
        if markup is None:
            return
        self.pre -= tag == "pre"
        if written:
            self.out.append(f"</{tag}>")
            kind = TAGS[tag]
            if kind == BLOCK:
                self.content, self.breaks, self.ws = False, 0, ""
            elif kind == CELL:
                self.ws = ""

    def brk(self) -> None:
        """A line break in the text."""
        if self.content or self.breaks:
            self.breaks += 1
        self.content = False
        self.ws = ""

    def space(self) -> None:
        """Whitespace in the text (a cell boundary)."""
        self.ws += " "

    def text(self, s: str, breaks: str) -> None:
        """A text node; the characters of ``breaks`` break the line, other whitespace is space."""
        i, n = 0, len(s)
        while i < n:
            c = s[i]
            if c in breaks:
                self.brk()
                i += 1
            elif c.isspace():
                self.ws += c if c in " \t" else " "
                i += 1
            else:
                start = i
                while i < n and not s[i].isspace() and s[i] not in breaks:
                    i += 1
                self._content(s[start:i])

    def _content(self, run: str) -> None:
        """Text: the open tags not yet written first (a block or cell tag is itself the break or
        space pending; a ``<br>`` or space goes before an inline tag), then the text."""
        out = self.out
        pending = self.stack[self.written :]
        structural = any(markup is not None and TAGS[tag] != INLINE for tag, markup in pending)
        if not structural:
            self._separate()
        for tag, markup in pending:
            if markup is not None:
                kind = TAGS[tag]
                if kind == BLOCK:
                    self.breaks, self.ws = 0, ""
                elif kind == CELL:
                    self.ws = ""
                out.append(markup)
        self.written = len(self.stack)
        if structural:
            self._separate()
        self.content = True
        out.append(escape(run, quote=False))

    def _separate(self) -> None:
        """The break or space pending before text: inside <pre> as it is."""
        if self.pre:
            self.out.append("\n" * self.breaks + self.ws)
        elif self.breaks:
            self.out.append("<br>")
        elif self.ws and self.content:
            self.out.append(" ")
        self.breaks, self.ws = 0, ""

    def finish(self) -> str:
        """The HTML written, every element written closed."""
        while self.stack:
            self.pop()
        return "".join(self.out)
