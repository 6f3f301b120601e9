#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_docrefs.py SOURCE_DIR - the repository's docs name nothing outside
the repository: no page of docs/, no folder README and no client README
refers to the project brief (design.md) or to the files beside the checkout
(../shared, shared/seeds, shared/reference, shared/openapi).  A newcomer has
only the repository.  The top README may name the shared folder where it
says what the test command needs beside a clone; nothing else may.
"""
import pathlib
import re
import sys

BAD = re.compile(r"design\.md|\.\./shared\b|\bshared/(?:seeds|reference|openapi|design)")


def main():
    root = pathlib.Path(sys.argv[1])
    pages = sorted(root.glob("docs/**/*.md")) + sorted(root.glob("src/**/README.md"))
    pages += sorted(root.glob("clients/**/README.md")) + [root / "README.md"]
    bad = 0
    for page in pages:
        for n, line in enumerate(page.read_text(errors="replace").splitlines(), 1):
            if BAD.search(line):
                print("%s:%d: names a file outside the repository: %s"
                      % (page.relative_to(root), n, line.strip()))
                bad += 1
    print("docrefs: %d pages, %d references outside the repository" % (len(pages), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
