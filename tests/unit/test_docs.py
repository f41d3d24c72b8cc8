"""README.md and docs/*.md stay readable and connected: no sentence over 60 words, and every
relative link (and its #anchor) leads to a file and heading that exist."""

import re
from pathlib import Path

import pytest

from support.paths import ROOT

MAX_WORDS = 60
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)[^)]*\)")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
TABLE_RULE = re.compile(r"^\|?[\s:|-]+\|?$")
HEADING = re.compile(r"^#{1,6}(\s|$)")
# A sentence ends at . ! or ? (perhaps closed by a bracket or quote) before a space or the end.
SENTENCE_END = re.compile(r"(?<=[.!?])[)\"']*(?=\s|$)")
ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.")


def _blocks(text):
    """(first line number, text) of every prose paragraph, list item and table cell, outside
    fenced code; headings are left out."""
    blocks, lines, start, in_fence = [], [], 0, False

    def flush():
        if lines:
            blocks.append((start, "\n".join(lines)))
        lines.clear()

    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            flush()
            in_fence = not in_fence
        elif in_fence or not line.strip() or HEADING.match(line.lstrip()):
            flush()
        elif line.lstrip().startswith("|"):
            flush()
            if not TABLE_RULE.match(line.strip()):
                blocks.extend((number, cell) for cell in _cells(line))
        else:
            if LIST_ITEM.match(line):
                flush()
            if not lines:
                start = number
            lines.append(line.lstrip("> "))
    flush()
    return blocks


def _cells(row):
    """A table row's cells; a `|` inside a code span does not split."""
    spans = []
    masked = CODE_SPAN.sub(lambda m: spans.append(m.group(0)) or "\0", row.strip().strip("|"))
    cells = re.split(r"(?<!\\)\|", masked)
    restored = iter(spans)
    return [re.sub("\0", lambda _: next(restored), cell) for cell in cells]


def _plain(text):
    """The words a reader reads: a code span is one word, a link is its text, not its target.
    Line breaks are kept so that positions still map to lines."""
    text = CODE_SPAN.sub(lambda m: "CODE" + "\n" * m.group(0).count("\n"), text)
    text = LINK.sub(lambda m: m.group(1), text)
    for abbreviation in ABBREVIATIONS:
        text = text.replace(abbreviation, abbreviation.replace(".", ""))
    return text


def _words(sentence):
    return [w for w in sentence.split() if re.search(r"\w", w)]


def long_sentences(path):
    """(line, word count, first words) of every sentence in `path` over MAX_WORDS words."""
    found = []
    for start, block in _blocks(path.read_text()):
        text, position = _plain(block), 0
        for end in [m.end() for m in SENTENCE_END.finditer(text)] + [len(text)]:
            sentence = text[position:end]
            words = _words(sentence)
            if len(words) > MAX_WORDS:
                leading = len(sentence) - len(sentence.lstrip())
                line = start + text[:position + leading].count("\n")
                found.append((line, len(words), " ".join(words[:8])))
            position = end
    return found


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = LINK.sub(lambda m: m.group(1), heading.strip().lstrip("#").strip()).lower()
    return re.sub(r"[^\w\- ]", "", text.replace("`", "")).replace(" ", "-")


def _anchors(path):
    anchors, in_fence = set(), False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and HEADING.match(line):
            anchors.add(_slug(line))
    return anchors


def _links(path):
    """(line, target) of every link in the prose and tables of `path`, code left out."""
    links = []
    for start, block in _blocks(path.read_text()):
        unquoted = CODE_SPAN.sub(lambda m: "\n" * m.group(0).count("\n"), block)
        for match in LINK.finditer(unquoted):
            links.append((start + unquoted[:match.start()].count("\n"), match.group(2)))
    return links


def broken_links(path):
    """(line, target, why) of every relative link in `path` to a missing file or heading."""
    broken = []
    for line, target in _links(path):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not ours to check
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append((line, target, "no such file"))
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append((line, target, "no such heading"))
    return broken


def _name(path):
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", DOCS, ids=_name)
def test_no_sentence_over_60_words(path):
    found = long_sentences(path)
    assert not found, "\n".join(f"{_name(path)}:{line}: {count} words: {first} ..."
                                for line, count, first in found)


@pytest.mark.parametrize("path", DOCS, ids=_name)
def test_relative_links_lead_somewhere(path):
    broken = broken_links(path)
    assert not broken, "\n".join(f"{_name(path)}:{line}: {target}: {why}" for line, target, why in broken)


def test_the_checks_catch_what_they_should(tmp_path):
    """The splitter counts prose, not code, tables' pipes or link targets; the link check sees
    missing files and headings."""
    page = tmp_path / "page.md"
    long = " ".join(["word"] * 61)
    page.write_text(f"# Title\n\nShort one. {long}.\n\n```\n{long}\n```\n\n| a | {long} |\n"
                    f"|---|---|\n\nA link [here]({'x' * 50}.md#{'y' * 50}) and `{' '.join(['c'] * 70)}`.\n\n"
                    "[ok](page.md#title) [bad](missing.md) [bad anchor](#nothing) [web](https://x.org/y.md)\n")
    assert long_sentences(page) == [(3, 61, "word word word word word word word word"),
                                    (9, 61, "word word word word word word word word")]
    assert broken_links(page) == [(12, "x" * 50 + ".md#" + "y" * 50, "no such file"),
                                  (14, "missing.md", "no such file"), (14, "#nothing", "no such heading")]
    page.write_text(" ".join(["word"] * 30) + " e.g. " + " ".join(["word"] * 30) + ".\n")
    assert [count for _, count, _ in long_sentences(page)] == [61]
