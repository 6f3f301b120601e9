#!/usr/bin/env bash
# check-clidocs.sh BUILD_DIR - the man pages and shell completions that the
# build makes from the table of commands (src/cli/table.c, `sluice
# __gendoc`), as `cmake --install` puts them:
#   1. installed: share/man/man1/sluice.1 and one page per command and
#      subcommand, share/man/man5/sluice.yaml.5 (from the site field table),
#      share/bash-completion/completions/sluice,
#      share/zsh/vendor-completions/_sluice; sluice.1 has its EXAMPLES,
#      FILES and ENVIRONMENT sections, and every variable ENVIRONMENT names
#      is one the sources read;
#   2. every page formats without a warning (groff -ww, man --warnings);
#   3. bash: sourcing the script and completing `sluice <TAB>` lists every
#      command of `sluice --help`, `sluice <cmd> -<TAB>` every option of
#      `sluice <cmd> --help` (subcommands too), and option values complete
#      (-o: text json; --state: the state machine's states; --set: the
#      site keys);
#   4. zsh: the script parses (zsh -n) and names every command and option;
#   5. every line of every command's help fits 80 columns.
# Prints one line per failure and "clidocs: <n> passed, <m> failed".
set -uo pipefail
build=$1
bin="$build/sluice"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
    echo "clidocs: FAIL $*"
    failed=$((failed + 1))
}

[ -x "$bin" ] || { echo "clidocs: no binary at $bin"; exit 1; }
for tool in groff man zsh; do
    command -v "$tool" >/dev/null || { echo "clidocs: $tool is missing (deploy/install-deps.sh)"; exit 1; }
done
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || { echo "clidocs: cmake --install failed"; exit 1; }
man1="$tmp/prefix/share/man/man1"
man5="$tmp/prefix/share/man/man5"
bashc="$tmp/prefix/share/bash-completion/completions/sluice"
zshc="$tmp/prefix/share/zsh/vendor-completions/_sluice"

# The commands and subcommands, as the help lists them.
section() { # section TITLE: the first words of the lines under "TITLE:"
    awk -v t="$1:" '$0 == t {on = 1; next} on && /^$/ {exit} on && /^  [a-z]/ {print $1}'
}
commands=$("$bin" --help | section commands)
[ -n "$commands" ] || fail "sluice --help lists no command"
paths=()
for c in $commands; do
    subs=$("$bin" help "$c" | section commands)
    if [ -n "$subs" ]; then
        for s in $subs; do paths+=("$c $s"); done
    else
        paths+=("$c")
    fi
done
# options of one command path, from its help
options() { # shellcheck disable=SC2086
    "$bin" help $1 | sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z-]*\).*/\2/p'
}
shorts() { # shellcheck disable=SC2086
    "$bin" help $1 | sed -n 's/^  \(-[a-z]\), --.*/\1/p'
}

# 1. installed
for f in "$man1/sluice.1" "$man5/sluice.yaml.5" "$bashc" "$zshc"; do
    if [ -s "$f" ]; then pass; else fail "not installed: ${f#"$tmp/prefix/"}"; fi
done
for c in $commands "${paths[@]}"; do
    page="$man1/sluice-${c// /-}.1"
    [ -s "$page" ] && pass || fail "no man page for '$c' (${page#"$tmp/prefix/"})"
done

for s in EXAMPLES FILES ENVIRONMENT; do
    grep -qx "\.SH $s" "$man1/sluice.1" && pass || fail "sluice.1 has no $s section"
done
src=$(cd "$(dirname "$0")/../../src" && pwd)
for v in $(awk '/^\.SH ENVIRONMENT/ {on = 1; next} /^\.SH/ {on = 0}
                on && prev == ".TP" && /^\.B / {print $2} {prev = $0}' "$man1/sluice.1"); do
    case $v in
    *'<'*) continue ;; # SLUICE_<SECTION>_<KEY>: the site layer's names
    esac
    grep -rqF "\"$v\"" "$src" && pass || fail "sluice.1 ENVIRONMENT names $v, which no source reads"
done

# 2. no warnings
for page in "$man1"/*.1 "$man5"/*.5; do
    out=$(groff -ww -man -z "$page" 2>&1)
    [ -z "$out" ] && pass || fail "groff -ww $(basename "$page"): $out"
    out=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
    [ -z "$out" ] && pass || fail "man --warnings $(basename "$page"): $out"
done

# 3. bash
complete_line() { # complete_line WORD...: what _sluice offers for the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
             COMP_LINE="$*"; _sluice; printf "%s\n" "${COMPREPLY[@]}"' _ "$bashc" "$@"
}
offered=$(complete_line sluice "")
for c in $commands; do
    grep -qx -- "$c" <<<"$offered" && pass || fail "bash: 'sluice <TAB>' does not offer $c"
done
grep -qx -- help <<<"$offered" || fail "bash: help is not offered"
for p in "${paths[@]}"; do
    # shellcheck disable=SC2086
    offered=$(complete_line sluice $p -)
    for o in $(options "$p") $(shorts "$p"); do
        grep -qx -- "$o" <<<"$offered" && pass || fail "bash: 'sluice $p -<TAB>' does not offer $o"
    done
done
offered=$(complete_line sluice status x -o "")
[ "$(sort <<<"$offered" | tr '\n' ' ')" = "json text " ] && pass ||
    fail "bash: 'sluice status -o <TAB>' offers '$offered'"
offered=$(complete_line sluice status x --output = "")
[ "$(sort <<<"$offered" | tr '\n' ' ')" = "json text " ] && pass ||
    fail "bash: 'sluice status --output=<TAB>' offers '$offered'"
offered=$(complete_line sluice ls --state "")
[ "$(grep -cxE 'ACCEPTED|SUBMITTING|PENDING|RUNNING|CANCELLING|DONE' <<<"$offered")" = 6 ] &&
    ! grep -qxE 'NEW|RECONCILING|RETRYING' <<<"$offered" && pass ||
    fail "bash: 'sluice ls --state <TAB>' offers '$offered'"
offered=$(complete_line sluice config show --set rest.u)
grep -qx 'rest.url=' <<<"$offered" && pass || fail "bash: 'sluice config show --set rest.u<TAB>' offers '$offered'"
offered=$(complete_line sluice check --set "")
[ "$(wc -l <<<"$offered")" -gt 20 ] && ! grep -qx 'gpu_series=' <<<"$offered" && pass ||
    fail "bash: 'sluice check --set <TAB>' offers '$(head -c 300 <<<"$offered")'"
offered=$(complete_line sluice token "")
[ "$(grep -cxE 'mint|show|check' <<<"$offered")" = 3 ] && pass ||
    fail "bash: 'sluice token <TAB>' offers '$offered'"

# 4. zsh
out=$(zsh -n "$zshc" 2>&1) && pass || fail "zsh -n: $out"
for c in $commands; do
    grep -q "'$c:" "$zshc" && pass || fail "zsh: command $c is not described"
done
for p in "${paths[@]}"; do
    for o in $(options "$p"); do
        awk -v p="\"$p\")" -v o="$o" '{line = $0; sub(/^ +/, "", line)}
            line == p {on = 1; next} on && index($0, o) {found = 1} on && /;;$/ {exit}
            END {exit !found}' "$zshc" && pass ||
            fail "zsh: '$p' does not complete $o"
    done
done

# 5. help fits 80 columns
for p in "${paths[@]}" $commands; do
    # shellcheck disable=SC2086
    wide=$("$bin" help $p | awk 'length($0) > 80')
    [ -z "$wide" ] && pass || fail "sluice help $p: lines over 80 columns: $wide"
done
wide=$("$bin" --help | awk 'length($0) > 80')
[ -z "$wide" ] && pass || fail "sluice --help: lines over 80 columns: $wide"

echo "clidocs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
