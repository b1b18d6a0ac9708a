"""MkDocs hook: links of the included READMEs to repository files the site renders as pages.

A package README links to the repository's README (`Part of [treadle](../../README.md)`), which
is right on GitHub and PyPI but names a file outside docs/. include-markdown rewrites the link
relative to the including page; this hook then points it at the site's page for that file. Any
other link is left alone, so a broken one still fails the strict build.
"""

from __future__ import annotations

import posixpath
import re

# Repository files (from the repository root) and the site pages that stand for them.
PAGES = {"README.md": "index.md"}
PAGES.update(
    {
        f"packages/{name}/README.md": f"packages/{name}.md"
        for name in (
            "logging",
            "config",
            "registry",
            "fileio",
            "dist",
            "visual",
            "runner",
            "compat",
        )
    }
)
LINK = re.compile(r"\]\(([^)\s#]+\.md)(#[^)\s]*)?\)")


def on_page_markdown(markdown, page, config, files):
    # The page's place in the repository: docs/<page path>.
    page_dir = posixpath.dirname(posixpath.join("docs", page.file.src_uri))

    def to_page(match):
        target = posixpath.normpath(posixpath.join(page_dir, match.group(1)))
        if target not in PAGES:
            return match.group(0)
        relative = posixpath.relpath(posixpath.join("docs", PAGES[target]), page_dir)
        return f"]({relative}{match.group(2) or ''})"

    return LINK.sub(to_page, markdown)
