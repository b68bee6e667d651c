r"""A report as plain blocks (tables, figures, text, code), rendered as HTML, Markdown or LaTeX.

HTML is one self-contained page: figures are inlined as base64 PNG, there is no
script, stylesheet link or font to fetch, and every text is escaped. Markdown and
LaTeX carry the same tables and text; figures are left out of them (named in a line).

Example:
    >>> doc = Doc("Demo", [Section("S", [Table(["metric", "r"], [["a_b", "0.5"]], caption="T")])])
    >>> print(to_markdown(doc).splitlines()[6])
    | metric | r |
    >>> "a\\_b" in to_latex(doc) and "<td>a_b</td>" in to_html(doc)
    True
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field

from dialeval.words import markdown_table


@dataclass
class Table:
    """A table: header, rows of cell strings, an optional caption."""

    header: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Figure:
    """A PNG figure with a caption (also its alt text)."""

    png: bytes
    caption: str


@dataclass
class Text:
    """A paragraph of plain text."""

    text: str


@dataclass
class Code:
    """Preformatted text (commands, signatures)."""

    text: str


Block = Table | Figure | Text | Code


@dataclass
class Section:
    """A titled list of blocks."""

    title: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Doc:
    """The whole report."""

    title: str
    sections: list[Section]


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#111}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}
th,td{border:1px solid #999;padding:3px 7px;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
thead th{background:#e6e6e6}caption{caption-side:top;text-align:left;font-weight:600;padding:4px 0}
figure{margin:1em 0 2em}figure img{max-width:100%;border:1px solid #ccc}
figcaption{font-size:13px;color:#333}pre{background:#f3f3f3;padding:.6em;overflow-x:auto;font-size:12px;
white-space:pre-wrap;word-break:break-all}h2{border-bottom:2px solid #333;margin-top:2em}
"""


def to_html(doc: Doc) -> str:
    """Render one self-contained HTML page."""
    e = html.escape
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{e(doc.title)}</title>",
             f"<style>{_CSS}</style></head><body><h1>{e(doc.title)}</h1>"]  # fmt: skip
    for s in doc.sections:
        parts.append(f"<section><h2>{e(s.title)}</h2>")
        for b in s.blocks:
            if isinstance(b, Table):
                head = "".join(f"<th>{e(h)}</th>" for h in b.header)
                body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in b.rows)
                cap = f"<caption>{e(b.caption)}</caption>" if b.caption else ""
                parts.append(f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            elif isinstance(b, Figure):
                data = base64.b64encode(b.png).decode("ascii")
                parts.append(f"<figure><img alt='{e(b.caption)}' src='data:image/png;base64,{data}'>"
                             f"<figcaption>{e(b.caption)}</figcaption></figure>")  # fmt: skip
            elif isinstance(b, Code):
                parts.append(f"<pre>{e(b.text)}</pre>")
            else:
                parts.append(f"<p>{e(b.text)}</p>")
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "".join(parts)


def table_markdown(table: Table) -> list[str]:
    r"""Return a table's Markdown lines: its caption in bold (when it has one), the header, the rule, the rows.

    Example:
        >>> table_markdown(Table(["metric", "r"], [["a|b", "0.5"]]))
        ['| metric | r |', '|---|---|', '| a\\|b | 0.5 |']
    """
    caption = [f"**{table.caption}**", ""] if table.caption else []
    return caption + markdown_table(table.header, table.rows)


def to_markdown(doc: Doc) -> str:
    """Render Markdown: the tables, text and code; a line per figure."""
    lines = [f"# {doc.title}", ""]
    for s in doc.sections:
        lines += [f"## {s.title}", ""]
        for b in s.blocks:
            if isinstance(b, Table):
                lines += table_markdown(b)
            elif isinstance(b, Figure):
                lines.append(f"*Figure (in the HTML report): {b.caption}*")
            elif isinstance(b, Code):
                lines += ["```", b.text, "```"]
            else:
                lines.append(b.text)
            lines.append("")
    return "\n".join(lines)


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}  # fmt: skip


def tex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters.

    Example:
        >>> tex_escape("ACC% & 100_x")
        'ACC\\% \\& 100\\_x'
    """
    return "".join(_TEX.get(ch, ch) for ch in text)


def to_latex(doc: Doc) -> str:
    """Render LaTeX fragments: one booktabs ``table`` per table, text as paragraphs, code verbatim."""
    out = [f"% {doc.title} (needs \\usepackage{{booktabs}})", ""]
    for s in doc.sections:
        out += [f"\\section*{{{tex_escape(s.title)}}}", ""]
        for b in s.blocks:
            if isinstance(b, Table):
                cols = "l" + "r" * (len(b.header) - 1)
                out += ["\\begin{table}[ht]", "\\centering\\small"]
                if b.caption:
                    out.append(f"\\caption{{{tex_escape(b.caption)}}}")
                out += [f"\\begin{{tabular}}{{{cols}}}", "\\toprule",
                        " & ".join(tex_escape(h) for h in b.header) + " \\\\", "\\midrule"]  # fmt: skip
                out += [" & ".join(tex_escape(c) for c in row) + " \\\\" for row in b.rows]
                out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
            elif isinstance(b, Figure):
                out.append(f"% figure in the HTML report: {b.caption}")
            elif isinstance(b, Code):
                out += ["\\begin{verbatim}", b.text, "\\end{verbatim}"]
            else:
                out.append(tex_escape(b.text))
            out.append("")
    return "\n".join(out)
