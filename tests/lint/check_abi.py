#!/usr/bin/env python3
"""check_abi.py SRC_DIR - the rules of the public ABI (docs/architecture.md,
"The public API and ABI").

Checks, each failure named with its file:
  1. every options struct of include/sluice/ is named `sluice_<name>_opts_t`
     (no `_options_t`, no `_OPTIONS_` constant, there or anywhere in src/,
     tests/, bench/ or docs/);
  2. its first member is `unsigned int version;`;
  3. its header defines SLUICE_<NAME>_OPTS_VERSION and SLUICE_<NAME>_OPTS_INIT
     and declares sluice_<name>_opts_init();
  4. src/ checks its version: opts_check_version("<name>", ...) is called;
  5. no public header includes a private one (only <sluice/...> and system
     headers).
Prints what it checked, and the counts of the ABI (transparent structs,
opaque types, versioned options), and exits 1 on any failure.
"""
import os
import re
import subprocess
import sys

STRUCT = re.compile(r"typedef struct(?: \w+)? \{(.*?)\n\} (\w+);", re.S)
OPAQUE = re.compile(r"^typedef struct (\w+) (\w+);", re.M)
OLD = re.compile(r"\b\w+_options_t\b|\bSLUICE_\w+_OPTIONS_(?:INIT|VERSION)\b")


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def tracked(top):
    try:
        out = subprocess.run(["git", "ls-files", "--", top], capture_output=True, text=True,
                             check=True).stdout.split()
        if out:
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    return [os.path.join(dp, f) for dp, _, fn in os.walk(top) for f in fn]


def main():
    os.chdir(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "."))
    failures = []
    headers = sorted(f for f in tracked("include/sluice") if f.endswith((".h", ".h.in")))
    src_text = "".join(open(f, encoding="utf-8", errors="replace").read()
                       for f in tracked("src") if f.endswith((".c", ".h")))
    n_transparent = n_opaque = 0
    opts = []
    for h in headers:
        text = open(h, encoding="utf-8").read()
        code = strip_comments(text)
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', code, re.M):
            failures.append(f"{h}: includes \"{m.group(1)}\": a public header includes only "
                            f"<sluice/...> and system headers")
        n_opaque += len(OPAQUE.findall(code))
        for body, name in STRUCT.findall(code):
            n_transparent += 1
            if not re.search(r"_opt(ion)?s_t$", name):
                continue
            opts.append(name)
            m = re.fullmatch(r"sluice_(\w+)_opts_t", name)
            if not m:
                failures.append(f"{h}: {name}: an options struct is named sluice_<name>_opts_t")
                continue
            base, up = m.group(1), m.group(1).upper()
            first = next((l.strip() for l in body.splitlines() if l.strip()), "")
            if not re.fullmatch(r"unsigned int version;", first):
                failures.append(f"{h}: {name}: the first member is `{first}`, not "
                                f"`unsigned int version;`")
            for what, pat in (
                (f"SLUICE_{up}_OPTS_VERSION", rf"#\s*define\s+SLUICE_{up}_OPTS_VERSION\s+\d+"),
                (f"SLUICE_{up}_OPTS_INIT", rf"#\s*define\s+SLUICE_{up}_OPTS_INIT\b"),
                (f"sluice_{base}_opts_init()", rf"\bsluice_{base}_opts_init\s*\(\s*{name}\s*\*"),
            ):
                if not re.search(pat, code):
                    failures.append(f"{h}: {name}: no {what}")
            if not re.search(rf'opts_check_version\(\s*"{base}"', src_text):
                failures.append(f"{h}: {name}: src/ never checks its version "
                                f"(opts_check_version(\"{base}\", ...))")
    for top in ("include", "src", "tests", "bench", "docs"):
        for f in tracked(top):
            if f.startswith("tests/fixtures/") or f == "tests/lint/check_abi.py":
                continue
            if not f.endswith((".c", ".h", ".h.in", ".md", ".py", ".sh", ".txt")):
                continue
            for i, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
                for m in OLD.finditer(line):
                    failures.append(f"{f}:{i}: {m.group(0)}: options structs are named "
                                    f"_opts_t (and their constants _OPTS_)")
    print(f"check-abi: {len(headers)} public headers: {n_transparent} transparent structs "
          f"({len(opts)} of them options structs), {n_opaque} opaque types")
    for msg in failures:
        print("check-abi: " + msg)
    print(f"check-abi: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
